! libmccl_mpi under a Fortran program that uses `use mpi_f08` (Open MPI's f08 bindings call
! ompi_*_f, then PMPI_*): the collectives the preload takes are seen by it (its counters)
! and give MPI's results on host buffers, MPI_IN_PLACE included. Exits non-zero on failure.
program preload_fortran_f08
  use mpi_f08
  use iso_c_binding
  implicit none
  interface
    subroutine mcclMpiPathCounters(viaMccl, viaMpi) bind(C, name="mcclMpiPathCounters")
      import :: c_int64_t
      integer(c_int64_t) :: viaMccl, viaMpi
    end subroutine
    subroutine mcclMpiStageHostForTests(on) bind(C, name="mcclMpiStageHostForTests")
      import :: c_int
      integer(c_int), value :: on
    end subroutine
    subroutine mcclMpiStageCounters(staged, live) bind(C, name="mcclMpiStageCounters")
      import :: c_long_long
      integer(c_long_long) :: staged, live
    end subroutine
  end interface
  integer(c_long_long) :: staged0, staged1, live
  integer :: nxt, prv
  integer :: x(64)
  integer, asynchronous :: y(64)
  type(MPI_Request) :: rq(2)
  type(MPI_Status) :: st
  integer :: rank, n, q, i, extent
  integer(c_int64_t) :: mccl0, mpi0, mccl1, mpi1
  double precision :: a(100), b(100)
  double precision, asynchronous :: c(100)
  type(MPI_Request) :: req
  real :: r(64)
  integer, allocatable :: counts(:), displs(:), g(:)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  call mcclMpiPathCounters(mccl0, mpi0)
  a = rank + 1
  call MPI_Allreduce(a, b, 100, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (any(b /= n * (n + 1) / 2.0d0)) error stop "MPI_Allreduce"
  call MPI_Allreduce(MPI_IN_PLACE, a, 100, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (any(a /= b)) error stop "MPI_Allreduce in place"
  r = rank
  call MPI_Bcast(r, 64, MPI_REAL, n - 1, MPI_COMM_WORLD)
  if (any(r /= n - 1)) error stop "MPI_Bcast"
  allocate(counts(n), displs(n))
  extent = 0
  do q = 1, n
    counts(q) = q
    displs(q) = extent
    extent = extent + q
  end do
  allocate(g(extent))
  g = -1
  g(displs(rank + 1) + 1 : displs(rank + 1) + rank + 1) = rank
  call MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_INTEGER, g, counts, displs, MPI_INTEGER, MPI_COMM_WORLD)
  do q = 1, n
    do i = 1, q
      if (g(displs(q) + i) /= q - 1) error stop "MPI_Allgatherv in place"
    end do
  end do
  ! A nonblocking form: its f08 name too, the request waited for by MPI_Wait.
  c = -1
  call MPI_Iallreduce(b, c, 100, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, req)
  call MPI_Wait(req, MPI_STATUS_IGNORE)
  if (any(c /= b)) error stop "MPI_Iallreduce"
  ! Point-to-point by the f08 names, through the preload's host copies (host buffers staged
  ! by this test as device buffers are on an MPI that cannot take them).
  call mcclMpiStageHostForTests(1)
  call mcclMpiStageCounters(staged0, live)
  nxt = mod(rank + 1, n)
  prv = mod(rank + n - 1, n)
  do i = 1, 64
    x(i) = 1000 * rank + i
  end do
  y = -1
  call MPI_Irecv(y, 64, MPI_INTEGER, prv, 7, MPI_COMM_WORLD, rq(1))
  call MPI_Isend(x, 64, MPI_INTEGER, nxt, 7, MPI_COMM_WORLD, rq(2))
  call MPI_Barrier(MPI_COMM_WORLD)
  if (any(y /= -1)) error stop "a staged receive wrote its buffer before its wait"
  call MPI_Wait(rq(1), st)
  if (st%MPI_SOURCE /= prv .or. st%MPI_TAG /= 7) error stop "MPI_Wait's status"
  call MPI_Waitall(1, rq(2:2), MPI_STATUSES_IGNORE)
  do i = 1, 64
    if (y(i) /= 1000 * prv + i) error stop "MPI_Irecv + MPI_Wait"
  end do
  y = -1
  call MPI_Sendrecv(x, 64, MPI_INTEGER, nxt, 8, y, 64, MPI_INTEGER, prv, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  if (y(64) /= 1000 * prv + 64) error stop "MPI_Sendrecv"
  call mcclMpiStageCounters(staged1, live)
  if (staged1 - staged0 /= 3) error stop "the point-to-point calls did not go through host copies"
  if (live /= 0) error stop "staged requests left alive"
  call mcclMpiStageHostForTests(0)
  call mcclMpiPathCounters(mccl1, mpi1)
  if (mpi1 - mpi0 < 5) error stop "the calls were not seen by libmccl_mpi"
  if (mccl1 /= mccl0) error stop "host buffers went to mccl"
  call MPI_Finalize()
end program

! libmccl_mpi under a Fortran program that uses `use mpi` (Open MPI's mpif.h bindings,
! mpi_*_ names, then PMPI_*): the collectives are seen by the preload and give MPI's
! results on host buffers, MPI_IN_PLACE included. Exits non-zero on failure.
program preload_fortran_mpi
  use mpi
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
  integer :: nxt, prv, i, k, idx, st(MPI_STATUS_SIZE), pr(2)
  logical :: flag
  integer, asynchronous :: x(64)
  integer, asynchronous :: y(64)
  integer :: ierr, rank, n, q
  integer(c_int64_t) :: mccl0, mpi0, mccl1, mpi1
  double precision :: a(100), b(100), c(100)
  integer :: req, reqs(2)
  integer, allocatable :: s(:), t(:), cnt(:), dsp(:)
  integer :: cart, nsc(2), nty(2)
  integer(kind=MPI_ADDRESS_KIND) :: nsd(2)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  call mcclMpiPathCounters(mccl0, mpi0)
  a = rank + 1
  call MPI_Allreduce(a, b, 100, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. any(b /= n * (n + 1) / 2.0d0)) error stop "MPI_Allreduce"
  call MPI_Allreduce(MPI_IN_PLACE, a, 100, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(a /= b)) error stop "MPI_Allreduce in place"
  allocate(s(2 * n), t(2 * n), cnt(n), dsp(n))
  do q = 1, 2 * n
    s(q) = 1000 * rank + q
  end do
  cnt = 2
  do q = 1, n
    dsp(q) = 2 * (q - 1)
  end do
  t = -1
  call MPI_Alltoallv(s, cnt, dsp, MPI_INTEGER, t, cnt, dsp, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do q = 1, n
    if (t(2 * q) /= 1000 * (q - 1) + 2 * rank + 2) error stop "MPI_Alltoallv"
  end do
  call MPI_Gather(s, 2, MPI_INTEGER, t, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do q = 1, n
      if (t(2 * q - 1) /= 1000 * (q - 1) + 1) error stop "MPI_Gather"
    end do
  end if
  ! The nonblocking forms: their Fortran names too, the requests waited for by MPI_Wait(all).
  c = -1
  call MPI_Iallreduce(b, c, 100, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (ierr /= MPI_SUCCESS .or. any(c /= b)) error stop "MPI_Iallreduce"
  t = -1
  call MPI_Ialltoallv(s, cnt, dsp, MPI_INTEGER, t, cnt, dsp, MPI_INTEGER, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Ibcast(a, 100, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  do q = 1, n
    if (t(2 * q) /= 1000 * (q - 1) + 2 * rank + 2) error stop "MPI_Ialltoallv"
  end do
  ! Point-to-point by the Fortran names, through the preload's host copies (this test has
  ! host buffers staged as device buffers are on an MPI that cannot take them).
  call mcclMpiStageHostForTests(1)
  call mcclMpiStageCounters(staged0, live)
  nxt = mod(rank + 1, n)
  prv = mod(rank + n - 1, n)
  do i = 1, 64
    x(i) = 1000 * rank + i
  end do
  y = -1
  call MPI_Irecv(y, 64, MPI_INTEGER, prv, 7, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(x, 64, MPI_INTEGER, nxt, 7, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (any(y /= -1)) error stop "a staged receive wrote its buffer before its wait"
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  do i = 1, 64
    if (y(i) /= 1000 * prv + i) error stop "MPI_Irecv + MPI_Waitall"
  end do
  y = -1
  call MPI_Sendrecv(x, 64, MPI_INTEGER, nxt, 8, y, 64, MPI_INTEGER, prv, 8, MPI_COMM_WORLD, st, ierr)
  if (st(MPI_SOURCE) /= prv .or. st(MPI_TAG) /= 8 .or. y(64) /= 1000 * prv + 64) error stop "MPI_Sendrecv"
  y = -1
  call MPI_Irecv(y, 64, MPI_INTEGER, prv, 9, MPI_COMM_WORLD, req, ierr)
  call MPI_Send(x, 64, MPI_INTEGER, nxt, 9, MPI_COMM_WORLD, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, st, ierr)
  end do
  if (req /= MPI_REQUEST_NULL .or. st(MPI_SOURCE) /= prv .or. y(1) /= 1000 * prv + 1) error stop "MPI_Test"
  y = -1
  call MPI_Isend(x, 64, MPI_INTEGER, nxt, 10, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(y, 64, MPI_INTEGER, prv, 10, MPI_COMM_WORLD, reqs(2), ierr)
  do k = 1, 2
    call MPI_Waitany(2, reqs, idx, st, ierr)
    if (idx < 1 .or. idx > 2) error stop "MPI_Waitany's index"
  end do
  if (y(32) /= 1000 * prv + 32) error stop "MPI_Waitany"
  ! Persistent requests, started twice.
  call MPI_Send_init(x, 64, MPI_INTEGER, nxt, 11, MPI_COMM_WORLD, pr(1), ierr)
  call MPI_Recv_init(y, 64, MPI_INTEGER, prv, 11, MPI_COMM_WORLD, pr(2), ierr)
  do k = 1, 2
    x(1) = 1000 * rank + 100 * k
    y = -1
    call MPI_Startall(2, pr, ierr)
    call MPI_Wait(pr(2), st, ierr)
    call MPI_Wait(pr(1), MPI_STATUS_IGNORE, ierr)
    if (y(1) /= 1000 * prv + 100 * k .or. y(2) /= 1000 * prv + 2) error stop "persistent requests"
  end do
  call MPI_Request_free(pr(1), ierr)
  call MPI_Request_free(pr(2), ierr)
  ! The collectives the route does not take: Scan, Iexscan, Reduce_local, Gatherv.
  x = rank + 1
  y = -1
  call MPI_Scan(x, y, 64, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (any(y /= (rank + 1) * (rank + 2) / 2)) error stop "MPI_Scan"
  y = -1
  call MPI_Iexscan(x, y, 64, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (rank > 0 .and. any(y /= rank * (rank + 1) / 2)) error stop "MPI_Iexscan"
  y = 5
  call MPI_Reduce_local(x, y, 64, MPI_INTEGER, MPI_MAX, ierr)
  if (any(y /= max(5, rank + 1))) error stop "MPI_Reduce_local"
  cnt = 1
  do q = 1, n
    dsp(q) = q - 1
  end do
  y = -1
  call MPI_Gatherv(x, 1, MPI_INTEGER, y, cnt, dsp, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do q = 1, n
      if (y(q) /= q) error stop "MPI_Gatherv"
    end do
  end if
  ! The neighbourhood collectives on a periodic line: block 0 to the rank before, 1 after.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, [n], [.true.], .false., cart, ierr)
  do i = 1, 64
    x(i) = 1000 * rank + i
  end do
  y = -1
  call MPI_Neighbor_alltoall(x, 2, MPI_INTEGER, y, 2, MPI_INTEGER, cart, ierr)
  if (y(1) /= 1000 * prv + 3 .or. y(4) /= 1000 * nxt + 2 .or. y(5) /= -1) error stop "MPI_Neighbor_alltoall"
  y = -1
  nsc = 2
  nsd = [0_MPI_ADDRESS_KIND, 16_MPI_ADDRESS_KIND]  ! bytes: the blocks 4 integers apart
  nty = MPI_INTEGER
  call MPI_Ineighbor_alltoallw(x, nsc, nsd, nty, y, nsc, nsd, nty, cart, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (y(1) /= 1000 * prv + 5 .or. y(6) /= 1000 * nxt + 2 .or. y(3) /= -1) error stop "MPI_Ineighbor_alltoallw"
  call MPI_Comm_free(cart, ierr)
  call mcclMpiStageCounters(staged1, live)
  if (staged1 - staged0 /= 15) error stop "the point-to-point calls did not go through host copies"
  if (live /= 0) error stop "staged requests left alive"
  call mcclMpiStageHostForTests(0)
  call mcclMpiPathCounters(mccl1, mpi1)
  if (mpi1 - mpi0 < 7) error stop "the calls were not seen by libmccl_mpi"
  if (mccl1 /= mccl0) error stop "host buffers went to mccl"
  call MPI_Finalize(ierr)
end program

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
  end interface
  integer :: ierr, rank, n, q
  integer(c_int64_t) :: mccl0, mpi0, mccl1, mpi1
  double precision :: a(100), b(100), c(100)
  integer :: req, reqs(2)
  integer, allocatable :: s(:), t(:), cnt(:), dsp(:)
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
  call mcclMpiPathCounters(mccl1, mpi1)
  if (mpi1 - mpi0 < 7) error stop "the calls were not seen by libmccl_mpi"
  if (mccl1 /= mccl0) error stop "host buffers went to mccl"
  call MPI_Finalize(ierr)
end program

! bench/programs.py: square roots of 1..100 summed, in Fortran (gfortran).
program h
  integer :: i
  real(8) :: s(100)
  do i = 1, 100
    s(i) = sqrt(real(i, 8))
  end do
  print '(F12.6)', sum(s)
end program

{ bench/programs.py: a static Free Pascal program (fpc links without libc): memtap warns it cannot trace it. }
program hello;
var i, s: longint; a: array[1..100] of longint; p: ^longint;
begin
  s := 0;
  for i := 1 to 100 do a[i] := i * 3;
  for i := 1 to 100 do s := s + a[i];
  new(p); p^ := s; writeln(p^); dispose(p);
end.

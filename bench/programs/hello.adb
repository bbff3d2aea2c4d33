-- bench/programs.py: squares of 1..50 summed, in Ada (gnatmake).
with Ada.Text_IO; use Ada.Text_IO;
procedure Hello is
   type Arr is array (1 .. 50) of Integer;
   A : Arr;
   S : Integer := 0;
begin
   for I in A'Range loop A (I) := I * I; end loop;
   for I in A'Range loop S := S + A (I); end loop;
   Put_Line (Integer'Image (S));
exception
   when others => Put_Line ("err");
end Hello;

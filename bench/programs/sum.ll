; bench/programs.py: 0..999 summed, LLVM IR run by lli (its JIT).
@.str = private constant [4 x i8] c"%d\0A\00"
declare i32 @printf(i8*, ...)
define i32 @main() {
entry:
  br label %loop
loop:
  %i = phi i32 [0, %entry], [%n, %loop]
  %s = phi i32 [0, %entry], [%s2, %loop]
  %s2 = add i32 %s, %i
  %n = add i32 %i, 1
  %c = icmp slt i32 %n, 1000
  br i1 %c, label %loop, label %done
done:
  call i32 (i8*, ...) @printf(i8* getelementptr ([4 x i8], [4 x i8]* @.str, i32 0, i32 0), i32 %s2)
  ret i32 0
}

# A Perl workload for bench/suites.py: hashes, regular expressions, sort,
# sprintf, pack; prints what it computed.
use strict;
use warnings;
my %count;
my $text = "the quick brown fox jumps over the lazy dog " x 3000;
$count{$_}++ for $text =~ /(\w+)/g;
print join(" ", map { "$_=$count{$_}" } sort keys %count), "\n";
my @n = map { ($_ * 7919) % 10007 } 1 .. 20000;
my @s = sort { $a <=> $b } @n;
my $sum = 0;
for (my $i = 0; $i < @s; $i += 97) { $sum += $s[$i]; }
print "sorted sum $sum\n";
(my $t = "Hello World, hello Perl") =~ s/hello/HI/gi;
print "$t\n";
printf("%08.3f|%-6s|%x|%e\n", 3.14159, "abc", 255, 12345.678);
my @fields = split /,\s*/, "a=1, b=22, c=333";
my %h = map { split /=/ } @fields;
print join(";", map { "$_$h{$_}" } sort keys %h), "\n";
my $packed = pack("NnC*", 0xdeadbeef, 513, 1, 2, 3);
print unpack("H*", $packed), " ", length($packed), "\n";
my @m = map { my $i = $_; [ map { ($i * $_) % 13 } 1 .. 200 ] } 1 .. 200;
my $tr = 0;
$tr += $m[$_][$_] + $m[$_][199 - $_] for 0 .. 199;
print "matrix $tr\n";
my $re = qr/^(\d{3})-(\d{4})$/;
print join(",", map { /$re/ ? "$2$1" : "no" } qw(555-1234 12-345 999-0000)), "\n";

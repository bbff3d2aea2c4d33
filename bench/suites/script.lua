-- A Lua workload for bench/suites.py: tables, strings, patterns, closures,
-- coroutines, sorting; prints what it computed.
local t = {}
for i = 1, 20000 do t[i] = (i * 7919) % 10007 end
table.sort(t)
local sum = 0
for i = 1, #t, 97 do sum = sum + t[i] end
print("sorted sum", sum)
local words, counts = {}, {}
local text = string.rep("the quick brown fox jumps over the lazy dog ", 2000)
for w in text:gmatch("%a+") do counts[w] = (counts[w] or 0) + 1 end
for w in pairs(counts) do words[#words + 1] = w end
table.sort(words)
for _, w in ipairs(words) do io.write(w, "=", counts[w], " ") end
print()
print(("memtap"):rep(3, "-"), ("Hello World"):gsub("o", "0"), ("%5.2f"):format(math.pi))
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
print("fib", fib(24))
local co = coroutine.wrap(function() for i = 1, 5 do coroutine.yield(i * i) end end)
local acc = {}
for _ = 1, 5 do acc[#acc + 1] = co() end
print("squares", table.concat(acc, ","))
local m = {}
for i = 1, 300 do m[i] = {} for j = 1, 300 do m[i][j] = (i * j) % 13 end end
local tr = 0
for i = 1, 300 do tr = tr + m[i][i] + m[i][301 - i] end
print("matrix", tr)
local parts = {}
for k, v in string.gmatch("a=1, b=22, c=333", "(%w+)=(%w+)") do parts[#parts + 1] = k .. v end
print(table.concat(parts, ";"), utf8.len("héllo"), #tostring(12345678901234))

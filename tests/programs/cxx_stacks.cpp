// cxx_stacks.cpp - allocations made inside the C++ library's containers:
// the blocks of a std::vector that grows (in fill) and the nodes of a
// std::map (in index_keys) come from frames of std:: functions; memtap
// names their sites after fill and index_keys, the first frames outside
// the library (it.alloc_stacks_cxx).  -O0: every std:: frame is a call.
#include <cstdio>
#include <map>
#include <vector>

__attribute__((noinline)) static long fill(std::vector<int> &v, int n)
{
    for (int i = 0; i < n; i++)
        v.push_back(i); // 1, 2, 4, ..., 64: 7 blocks for 40 elements
    return v.back();
}

__attribute__((noinline)) static long index_keys(std::map<int, int> &m, int n)
{
    for (int i = 0; i < n; i++)
        m[i * 7] = i; // one node each: 25 blocks
    return (long)m.size();
}

int main()
{
    std::vector<int> v;
    std::map<int, int> m;
    long a = fill(v, 40), b = index_keys(m, 25);
    std::printf("%ld %ld\n", a, b);
    return 0;
}

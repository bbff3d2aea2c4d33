// bench/programs.py: C++ exceptions thrown and caught, a map, four threads.
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
int f(int i) { if (i % 7 == 0) throw std::runtime_error("seven " + std::to_string(i)); return i * 2; }
int main() {
  std::map<std::string, int> m; long s = 0; int caught = 0;
  for (int i = 1; i < 2000; i++) { try { s += f(i); } catch (const std::exception &e) { caught++; m[e.what()] = i; } }
  std::vector<std::thread> ts; std::vector<long> r(4);
  for (int t = 0; t < 4; t++) ts.emplace_back([&, t] { for (int i = 0; i < 100000; i++) r[t] += i % (t + 3); });
  for (auto &t : ts) t.join();
  std::cout << s << " " << caught << " " << m.size() << " " << r[0] + r[1] + r[2] + r[3] << "\n";
}

// exceptions.cpp - for the rewriter's corpus: C++ exceptions thrown
// through several frames (unwinding must find the original return
// addresses), a std::map and std::string on the heap, virtual calls.
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>

struct Shape {
    virtual ~Shape() {}
    virtual long area() const = 0;
};
struct Rect : Shape {
    long w, h;
    Rect(long a, long b) : w(a), h(b) {}
    long area() const override { return w * h; }
};
struct Square : Shape {
    long s;
    explicit Square(long a) : s(a) {}
    long area() const override { return s * s; }
};

static long check(long v, int depth)
{
    if (depth == 0) {
        if (v % 3 == 0)
            throw std::runtime_error("multiple of three: " + std::to_string(v));
        return v;
    }
    return check(v + 1, depth - 1) + 1;
}

int main()
{
    std::map<std::string, long> tally;
    long caught = 0, sum = 0;
    for (long i = 0; i < 200; i++) {
        try {
            sum += check(i, (int)(i % 7));
        } catch (const std::exception &e) {
            caught++;
            tally[std::string(e.what()).substr(0, 8)]++;
        }
    }
    Shape *shapes[] = { new Rect(3, 4), new Square(5), new Rect(6, 7) };
    long areas = 0;
    for (Shape *s : shapes) {
        areas += s->area();
        delete s;
    }
    std::printf("caught %ld sum %ld areas %ld kinds %zu first %s %ld\n", caught,
                sum, areas, tally.size(), tally.begin()->first.c_str(),
                tally.begin()->second);
    return 0;
}

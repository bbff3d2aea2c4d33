// C++ allocation: new/delete, arrays, aligned, nothrow, and an exception
// thrown by operator new that the program catches.
#include <cstdio>
#include <new>

struct alignas(64) Line {
    char bytes[64];
};

struct Widget {
    int id;
    double weight;
};

__attribute__((noinline)) Widget *make_widget(int id)
{
    return new Widget{id, 1.5};
}

// Its name has a comma: "Widget* make_from<Widget, long>(long)", a CSV
// field to quote.
template <typename A, typename B>
__attribute__((noinline)) A *make_from(B b)
{
    return new A{static_cast<int>(b), 2.5};
}

int main()
{
    Widget *w = make_widget(7);                    // M 0 new, 16 bytes
    int *arr = new int[10];                        // M 1 new[], 40 bytes
    Line *l = new Line;                            // M 2 aligned new, 64
    int *n = new (std::nothrow) int(3);            // M 3 nothrow new, 4
    delete w;                                      // F (delete, sized)
    delete[] arr;                                  // F (delete[])
    delete l;                                      // F (aligned delete)
    delete n;                                      // F
    Widget *p = make_from<Widget, long>(9);        // M 4 new, in make_from
    std::printf("%d\n", p->id);
    delete p;
    try {
        char *huge = new char[(size_t)1 << 62];    // throws bad_alloc
        huge[0] = 1;
        return 1;
    } catch (const std::bad_alloc &) {
        std::puts("caught bad_alloc");
    }
    return 0;
}

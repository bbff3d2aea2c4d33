/*
 * heap.c - the dynamic memory tracker: wrappers for the malloc family, the
 * mmap family, brk/sbrk and C++ operator new/delete.  Each wrapper calls
 * the real function and records one event (MadT Table I kind, call site =
 * return address into the caller, a global allocation number, the call
 * stack from the site out).  Blocks are
 * named after the run by the symbolizer, never here.
 *
 * C++ operators forward to the C++ runtime's own operators (so new_handler
 * and exceptions behave as before) and mark the calling thread so that the
 * malloc/free they make is recorded once, with the operator's call site.
 */
#define _GNU_SOURCE
#include "preload/fault/fault.h"
#include "preload/memmap/traced_set.h"
#include "preload/filter/watch.h"
#include "rt/rewritten.h"
#include "preload/core/own_text.h"
#include "shadow_host.h"
#include "preload/record/tracer.h"
#include "preload/record/stacks.h"
#include "preload/core/stop_world.h"
#include "preload/syscall/syscalls.h"

#include <dlfcn.h>
#include <malloc.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__sbrk(intptr_t);

/* The allocator the wrappers below call: the next definitions after
 * libmemtap.so's, those of another preloaded allocator (jemalloc's, whose
 * C++ operators call free by name, and so memtap's: with the C library's
 * called here, its blocks went to glibc's free, "free(): invalid
 * pointer") or the C library's; looked up at the first call, the C
 * library's while the lookup runs (dlsym may allocate) or when one of
 * them is missing. */
typedef struct allocator {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    void *(*memalign)(size_t, size_t);
} allocator;

static const allocator libc_alloc = { __libc_malloc, __libc_calloc,
                                      __libc_realloc, __libc_free,
                                      __libc_memalign };
static allocator next_alloc;
static int next_alloc_state; /* 0: not looked up, 1: looking, 2: found */

static void look_up_allocator(void)
{
    int none = 0;
    if (!__atomic_compare_exchange_n(&next_alloc_state, &none, 1, 0,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return;
    allocator a;
    *(void **)&a.malloc = dlsym(RTLD_NEXT, "malloc");
    *(void **)&a.calloc = dlsym(RTLD_NEXT, "calloc");
    *(void **)&a.realloc = dlsym(RTLD_NEXT, "realloc");
    *(void **)&a.free = dlsym(RTLD_NEXT, "free");
    *(void **)&a.memalign = dlsym(RTLD_NEXT, "memalign");
    next_alloc = a.malloc && a.calloc && a.realloc && a.free && a.memalign
                     ? a
                     : libc_alloc;
    __atomic_store_n(&next_alloc_state, 2, __ATOMIC_RELEASE);
}

static inline const allocator *alloc(void)
{
    if (__builtin_expect(__atomic_load_n(&next_alloc_state, __ATOMIC_ACQUIRE) == 2, 1))
        return &next_alloc;
    look_up_allocator();
    return __atomic_load_n(&next_alloc_state, __ATOMIC_ACQUIRE) == 2
               ? &next_alloc
               : &libc_alloc;
}

#define CALL_SITE ((uint64_t)(uintptr_t)__builtin_return_address(0))

/* The allocator's own work on its metadata and on the blocks it clears or
 * moves is not the program's: as in MadT, it runs with tracing lifted -
 * while the program has one thread.  With several, the allocator's locks
 * rule out stopping the others for a whole call, so under the fault engine
 * its accesses are traced one by one like any others; what a rewritten
 * allocator logs is the calling thread's alone, always dropped. */
#define OWN(call)                                                            \
    ({                                                                        \
        int own_ = !world_shared();                                           \
        if (own_)                                                             \
            fault_own_begin();                                                \
        rewritten_own_begin();                                                \
        __typeof__(call) own_result_ = (call);                                \
        rewritten_own_end();                                                  \
        if (own_)                                                             \
            fault_own_end();                                                  \
        own_result_;                                                          \
    })

/* A C++ operator in progress on this thread: its kind flags and site. */
static __thread struct {
    int active;
    uint8_t flags;
    uint64_t site;
} tls_op __attribute__((tls_model("initial-exec")));

static int recording(void)
{
    return tracer_enabled() && !tracer_internal();
}

/* The operator's site and flags replace the wrapper's, once. */
static void take_operator(uint64_t *site, uint8_t *flags)
{
    if (!tls_op.active)
        return;
    *site = tls_op.site;
    *flags |= tls_op.flags;
    tls_op.active = 0;
}

/* A failed allocation ends the operator's claim: what the C++ runtime
 * allocates next (the bad_alloc exception) is its own. */
static void *checked(void *p)
{
    if (!p)
        tls_op.active = 0;
    return p;
}

/* The event's call stack from site out (its unwinding touches the
 * program's stack and the unwinder's data as memtap's own). */
static uint32_t call_stack(uint64_t site)
{
    tracer_internal_enter();
    uint32_t id = stacks_id(site);
    tracer_internal_leave();
    return id;
}

/* Both run as memtap's: errno is the C library's (__errno_location,
 * rewritten), and its access is not the program's. */
static void record_alloc(uint8_t kind, uint8_t flags, void *p, uint64_t size,
                         void *old, uint64_t site)
{
    rewritten_own_begin();
    int saved = errno;
    take_operator(&site, &flags);
    if (watch_active())
        watch_block_made((uint64_t)(uintptr_t)p, size, site,
                         (uint64_t)(uintptr_t)old);
    else if (p && kind != MEMTAP_EV_MMAP && kind != MEMTAP_EV_MREMAP)
        traced_add((uintptr_t)p, (uintptr_t)p + (size ? size : 1),
                    PROT_READ | PROT_WRITE, PM_HEAP);
    tracer_record_counted(kind, flags, site, (uint64_t)(uintptr_t)p, size,
                          (uint64_t)(uintptr_t)old, tracer_next_alloc_id(),
                          call_stack(site));
    errno = saved;
    rewritten_own_end();
}

static void record_release(uint8_t kind, uint8_t flags, void *p,
                           uint64_t size, uint64_t site)
{
    rewritten_own_begin();
    int saved = errno;
    take_operator(&site, &flags);
    watch_block_released((uint64_t)(uintptr_t)p);
    tracer_record_counted(kind, flags, site, (uint64_t)(uintptr_t)p, size, 0,
                          0, call_stack(site));
    errno = saved;
    rewritten_own_end();
}

/* ---- the malloc family ---- */

MEMTAP_EXPORT void *malloc(size_t size)
{
    void *p = checked(OWN(alloc()->malloc(size)));
    if (p && recording())
        record_alloc(MEMTAP_EV_MALLOC, 0, p, size, NULL, CALL_SITE);
    return p;
}

MEMTAP_EXPORT void *calloc(size_t n, size_t size)
{
    void *p = OWN(alloc()->calloc(n, size));
    if (p && recording())
        record_alloc(MEMTAP_EV_CALLOC, 0, p, (uint64_t)n * size, NULL,
                     CALL_SITE);
    return p;
}

/* A shadow-memory tool needs the size of a block being released. */
static void note_block_size(void *p)
{
    if (p && shadow_host_active() && recording())
        shadow_host_note_block_size(OWN(malloc_usable_size(p)));
}

static void *realloc_at(void *old, size_t size, uint64_t site)
{
    note_block_size(old);
    void *p = OWN(alloc()->realloc(old, size));
    /* realloc(p, 0) frees p and returns NULL: a reallocation to nothing */
    if ((p || (old && size == 0)) && recording())
        record_alloc(MEMTAP_EV_REALLOC, 0, p, p ? size : 0, old, site);
    return p;
}

MEMTAP_EXPORT void *realloc(void *old, size_t size)
{
    return realloc_at(old, size, CALL_SITE);
}

MEMTAP_EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_at(old, total, CALL_SITE);
}

MEMTAP_EXPORT void free(void *p)
{
    note_block_size(p);
    if (p && recording())
        record_release(MEMTAP_EV_FREE, 0, p, 0, CALL_SITE);
    OWN((alloc()->free(p), 0));
}

static int valid_alignment(size_t align)
{
    return align != 0 && (align & (align - 1)) == 0;
}

static void *aligned_at(size_t align, size_t size, uint64_t site)
{
    void *p = checked(OWN(alloc()->memalign(align, size)));
    if (p && recording())
        record_alloc(MEMTAP_EV_MALLOC, MEMTAP_RF_ALIGNED, p, size, NULL, site);
    return p;
}

MEMTAP_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (!valid_alignment(align) || align % sizeof(void *) != 0)
        return EINVAL;
    int saved = errno;
    void *p = aligned_at(align, size, CALL_SITE);
    errno = saved;
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

MEMTAP_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    if (!valid_alignment(align)) {
        errno = EINVAL;
        return NULL;
    }
    return aligned_at(align, size, CALL_SITE);
}

MEMTAP_EXPORT void *memalign(size_t align, size_t size)
{
    return aligned_at(align, size, CALL_SITE);
}

/* valloc and pvalloc as the allocator's memalign of a page (glibc's
 * do the same; jemalloc has no pvalloc). */
MEMTAP_EXPORT void *valloc(size_t size)
{
    return aligned_at((size_t)sysconf(_SC_PAGESIZE), size, CALL_SITE);
}

MEMTAP_EXPORT void *pvalloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rounded = (size + page - 1) & ~(page - 1);
    if (rounded < size) {
        errno = ENOMEM;
        return NULL;
    }
    return aligned_at(page, rounded ? rounded : page, CALL_SITE);
}

/* ---- the mmap family (straight to the kernel, as glibc does) ---- */

MEMTAP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
                         off_t off)
{
    long a[6] = { (long)addr, (long)len, prot, flags, fd, (long)off };
    long r;
    if (flags & MAP_FIXED) /* what was there is no longer traced */
        r = traced_unmap(SYS_mmap, a);
    else
        r = raw_syscall6(SYS_mmap, a[0], a[1], a[2], a[3], a[4], a[5]);
    syscalls_note_code_made(SYS_mmap, a, r, CALL_SITE);
    if (r < 0 && r > -4096) {
        errno = (int)-r;
        return MAP_FAILED;
    }
    void *p = (void *)r;
    if (recording()) {
        if (!watch_active())
            traced_add((uintptr_t)p, (uintptr_t)p + len, prot,
                       PM_HEAP | ((flags & MAP_TYPE) != MAP_PRIVATE ? PM_SHARED : 0));
        record_alloc(MEMTAP_EV_MMAP, 0, p, len, NULL, CALL_SITE);
    }
    return p;
}

MEMTAP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags,
                           int fd, off_t off)
    __attribute__((alias("mmap")));

MEMTAP_EXPORT int munmap(void *addr, size_t len)
{
    long a[2] = { (long)addr, (long)len };
    long r = traced_unmap(SYS_munmap, a);
    if (r < 0) {
        errno = (int)-r;
        return -1;
    }
    if (recording())
        record_release(MEMTAP_EV_MUNMAP, 0, addr, len, CALL_SITE);
    return 0;
}

MEMTAP_EXPORT void *mremap(void *old, size_t old_len, size_t new_len,
                           int flags, ...)
{
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    long r = traced_remap((uintptr_t)old, old_len, new_len, flags, (uintptr_t)want);
    if (r < 0 && r > -4096) {
        errno = (int)-r;
        return MAP_FAILED;
    }
    void *p = (void *)r;
    traced_move((uintptr_t)old, old_len, (uintptr_t)p, new_len);
    if (recording())
        record_alloc(MEMTAP_EV_MREMAP, 0, p, new_len, old, CALL_SITE);
    return p;
}

/* ---- the program break: growth is a mapping, shrinking an unmapping ---- */

static void record_break(char *old_end, char *new_end, uint64_t site)
{
    if (new_end > old_end && !watch_active())
        traced_add((uintptr_t)old_end, (uintptr_t)new_end,
                    PROT_READ | PROT_WRITE, PM_HEAP);
    else
        traced_remove((uintptr_t)new_end, (uintptr_t)old_end);
    if (new_end > old_end)
        record_alloc(MEMTAP_EV_MMAP, MEMTAP_RF_BRK, old_end,
                     (uint64_t)(new_end - old_end), NULL, site);
    else if (new_end < old_end)
        record_release(MEMTAP_EV_MUNMAP, MEMTAP_RF_BRK, new_end,
                       (uint64_t)(old_end - new_end), site);
}

MEMTAP_EXPORT void *sbrk(intptr_t incr)
{
    char *old = __sbrk(incr);
    if (old != (char *)-1 && recording())
        record_break(old, old + incr, CALL_SITE);
    return old;
}

static int (*next_brk)(void *);

void heap_resolve_next(void)
{
    next_brk = (int (*)(void *))dlsym(RTLD_NEXT, "brk");
}

MEMTAP_EXPORT int brk(void *end)
{
    if (!next_brk)
        heap_resolve_next();
    char *old = __sbrk(0);
    int rc = next_brk ? next_brk(end) : -1;
    if (rc == 0 && recording())
        record_break(old, end, CALL_SITE);
    return rc;
}

/* ---- C++ operators ---- */

static void *next_symbol(void **slot, const char *name)
{
    if (!*slot) {
        tracer_internal_enter();
        *slot = dlsym(RTLD_NEXT, name);
        tracer_internal_leave();
    }
    return *slot;
}

/* OPERATOR_SCOPE's cleanup (-fexceptions) names the unwinder's C
 * personality routine and _Unwind_Resume.  Both only run while an
 * exception unwinds through a wrapper, when the C++ runtime's unwinder is
 * loaded, so they are looked up then: libmemtap.so needs no libgcc_s,
 * which a C program would otherwise load (and, under the static engine,
 * run rewritten: accesses of its constructor the program never makes). */
static void *unwinder(const char *name)
{
    void *lib = dlopen("libgcc_s.so.1", RTLD_NOW);
    void *fn = lib ? dlsym(lib, name) : NULL;
    if (!fn)
        abort();
    return fn;
}

typedef int (*personality_fn)(int, int, uint64_t, void *, void *);

__attribute__((visibility("hidden"))) int
__gcc_personality_v0(int version, int actions, uint64_t cls, void *e,
                     void *ctx);
int __gcc_personality_v0(int version, int actions, uint64_t cls, void *e,
                         void *ctx)
{
    static personality_fn real;
    if (!real)
        real = (personality_fn)unwinder("__gcc_personality_v0");
    return real(version, actions, cls, e, ctx);
}

__attribute__((visibility("hidden"), noreturn)) void _Unwind_Resume(void *e);
void _Unwind_Resume(void *e)
{
    static void (*real)(void *);
    if (!real)
        real = (void (*)(void *))unwinder("_Unwind_Resume");
    real(e);
    __builtin_unreachable();
}

static void operator_end(int *owner)
{
    if (*owner)
        tls_op.active = 0;
}

/* Marks this thread inside a C++ operator until the enclosing scope ends,
 * by return or by exception.  An operator the C++ runtime calls from
 * another (new[] calls new) keeps the outer one's site and flags. */
#define OPERATOR_SCOPE(f, s)                                                 \
    int op_owner __attribute__((cleanup(operator_end))) = !tls_op.active;     \
    if (op_owner) {                                                           \
        tls_op.flags = (f);                                                   \
        tls_op.site = (s);                                                    \
        tls_op.active = 1;                                                    \
    }

typedef struct { char unused; } nothrow_tag;

#define NEW_OPERATOR(mangled, opflags, params, args)                           \
    MEMTAP_EXPORT void *mangled params                                        \
    {                                                                         \
        static void *real;                                                    \
        void *(*fn) params = (void *(*) params)next_symbol(&real, #mangled);  \
        OPERATOR_SCOPE(opflags, CALL_SITE);                                     \
        if (fn)                                                               \
            return fn args;                                                   \
        void *p = malloc(size);                                               \
        if (!p)                                                               \
            abort();                                                          \
        return p;                                                             \
    }

#define DELETE_OPERATOR(mangled, opflags, params, args)                        \
    MEMTAP_EXPORT void mangled params                                         \
    {                                                                         \
        static void *real;                                                    \
        void (*fn) params = (void (*) params)next_symbol(&real, #mangled);    \
        OPERATOR_SCOPE(opflags, CALL_SITE);                                     \
        if (fn)                                                               \
            fn args;                                                          \
        else                                                                  \
            free(p);                                                          \
    }

#define NEW MEMTAP_RF_NEW
#define ARR (MEMTAP_RF_NEW | MEMTAP_RF_ARRAY)
#define ALN MEMTAP_RF_ALIGNED
typedef const nothrow_tag *nt;

NEW_OPERATOR(_Znwm, NEW, (size_t size), (size))
NEW_OPERATOR(_Znam, ARR, (size_t size), (size))
NEW_OPERATOR(_ZnwmRKSt9nothrow_t, NEW, (size_t size, nt t), (size, t))
NEW_OPERATOR(_ZnamRKSt9nothrow_t, ARR, (size_t size, nt t), (size, t))
NEW_OPERATOR(_ZnwmSt11align_val_t, NEW | ALN, (size_t size, size_t a),
             (size, a))
NEW_OPERATOR(_ZnamSt11align_val_t, ARR | ALN, (size_t size, size_t a),
             (size, a))
NEW_OPERATOR(_ZnwmSt11align_val_tRKSt9nothrow_t, NEW | ALN,
             (size_t size, size_t a, nt t), (size, a, t))
NEW_OPERATOR(_ZnamSt11align_val_tRKSt9nothrow_t, ARR | ALN,
             (size_t size, size_t a, nt t), (size, a, t))

DELETE_OPERATOR(_ZdlPv, NEW, (void *p), (p))
DELETE_OPERATOR(_ZdaPv, ARR, (void *p), (p))
DELETE_OPERATOR(_ZdlPvm, NEW, (void *p, size_t n), (p, n))
DELETE_OPERATOR(_ZdaPvm, ARR, (void *p, size_t n), (p, n))
DELETE_OPERATOR(_ZdlPvRKSt9nothrow_t, NEW, (void *p, nt t), (p, t))
DELETE_OPERATOR(_ZdaPvRKSt9nothrow_t, ARR, (void *p, nt t), (p, t))
DELETE_OPERATOR(_ZdlPvSt11align_val_t, NEW | ALN, (void *p, size_t a),
                (p, a))
DELETE_OPERATOR(_ZdaPvSt11align_val_t, ARR | ALN, (void *p, size_t a),
                (p, a))
DELETE_OPERATOR(_ZdlPvmSt11align_val_t, NEW | ALN,
                (void *p, size_t n, size_t a), (p, n, a))
DELETE_OPERATOR(_ZdaPvmSt11align_val_t, ARR | ALN,
                (void *p, size_t n, size_t a), (p, n, a))
DELETE_OPERATOR(_ZdlPvSt11align_val_tRKSt9nothrow_t, NEW | ALN,
                (void *p, size_t a, nt t), (p, a, t))
DELETE_OPERATOR(_ZdaPvSt11align_val_tRKSt9nothrow_t, ARR | ALN,
                (void *p, size_t a, nt t), (p, a, t))

// For the wheel's CLI (an executable): glibc 2.34's crt1.o hands __libc_start_main no init
// function, because 2.34 runs the executable's constructors itself; glibc 2.28 runs them only
// through that init function (its crt1.o passed __libc_csu_init). This __libc_start_main,
// which crt1.o's call binds to, passes the real one (GLIBC_2.2.5, on every glibc) an init
// function that does what __libc_csu_init did: glibc 2.28 calls it, and 2.34 and later,
// given one, call it instead of running the constructors themselves (their path for
// programs linked before 2.34), so they run once everywhere. The destructors are run by
// ld.so's _dl_fini on both.
#include <stddef.h>

typedef int (*MainFn)(int, char**, char**);
typedef void (*InitFn)(int, char**, char**);

extern int real_libc_start_main(MainFn main, int argc, char** argv, InitFn init,
                                void (*fini)(void), void (*rtld_fini)(void), void* stack_end);
__asm__(".symver real_libc_start_main, __libc_start_main@GLIBC_2.2.5");

extern InitFn __preinit_array_start[] __attribute__((visibility("hidden")));
extern InitFn __preinit_array_end[] __attribute__((visibility("hidden")));
extern InitFn __init_array_start[] __attribute__((visibility("hidden")));
extern InitFn __init_array_end[] __attribute__((visibility("hidden")));
extern void _init(void);

static void RunInitializers(int argc, char** argv, char** envp) {
  for (InitFn* f = __preinit_array_start; f < __preinit_array_end; ++f) (*f)(argc, argv, envp);
  _init();
  for (InitFn* f = __init_array_start; f < __init_array_end; ++f) (*f)(argc, argv, envp);
}

__attribute__((visibility("hidden"))) int __libc_start_main(
    MainFn main, int argc, char** argv, InitFn init, void (*fini)(void),
    void (*rtld_fini)(void), void* stack_end) {
  (void)init;
  (void)fini;
  return real_libc_start_main(main, argc, argv, RunInitializers, NULL, rtld_fini, stack_end);
}

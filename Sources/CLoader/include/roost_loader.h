#pragma once
// Agent-only C libraries (libcurl, libnotify, libsoup, gdk-pixbuf) are not linked into `roost`: a command that
// only reads the archive would pay for loading them (and the ~40 shared objects they pull in) before `main`.
// Each of those C modules defines the library's functions Roost calls as forwarders that open the library
// with dlopen on first use and call the real function through dlsym (docs/performance-history.md, "Start-up").

typedef struct RoostLibrary {
    const char *soname;          // e.g. "libcurl.so.4"
    int tried;                   // dlopen was called (under the loader's lock)
    void *handle;                // NULL when dlopen failed
    char error[256];             // dlerror() of the failed dlopen
} RoostLibrary;

#define ROOST_LIBRARY(variable, name) static RoostLibrary variable = { name, 0, 0, { 0 } }

/// Opens the library once; NULL when it is loaded, otherwise why it is not (dlerror's text).
const char *roost_library_load(RoostLibrary *library);

/// The address of `symbol` in the library; aborts with the library's name and dlerror's text when the
/// library or the symbol is missing (callers check `roost_library_load` first to report a typed error).
void *roost_library_symbol(RoostLibrary *library, const char *symbol);

// The real function `name` of `library`, looked up once (its type is the prototype's, from the library's
// header or the module's shim).
#define ROOST_REAL(library, name) ({ \
        static __typeof__(&name) real; \
        __typeof__(&name) fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE); \
        if (!fn) { fn = (__typeof__(&name))roost_library_symbol(&library, #name); __atomic_store_n(&real, fn, __ATOMIC_RELEASE); } \
        fn; })

// One forwarder: a function with the library's name and signature that calls the real one. Hidden, so it
// stays out of the executable's dynamic symbols: the libraries' own calls (libnotify's g_object_unref, say)
// bind to the real function, never to a forwarder, even while a constructor runs inside dlopen.
#define ROOST_FORWARD(library, ret, name, params, args) \
    __attribute__((visibility("hidden"))) ret name params { return ROOST_REAL(library, name) args; }

#define ROOST_FORWARD_VOID(library, name, params, args) \
    __attribute__((visibility("hidden"))) void name params { ROOST_REAL(library, name) args; }

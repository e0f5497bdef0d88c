#include "roost_loader.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

const char *roost_library_load(RoostLibrary *library) {
    pthread_mutex_lock(&lock);
    if (!library->tried) {
        library->tried = 1;
        library->handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
        if (!library->handle) {
            const char *reason = dlerror();
            snprintf(library->error, sizeof library->error, "%s", reason ? reason : library->soname);
        }
    }
    const char *error = library->handle ? NULL : library->error;
    pthread_mutex_unlock(&lock);
    return error;
}

void *roost_library_symbol(RoostLibrary *library, const char *symbol) {
    const char *error = roost_library_load(library);
    if (error) {
        fprintf(stderr, "roost: %s is needed here but could not be loaded: %s\n", library->soname, error);
        abort();
    }
    pthread_mutex_lock(&lock);
    void *address = dlsym(library->handle, symbol);
    const char *reason = address ? NULL : dlerror();
    pthread_mutex_unlock(&lock);
    if (!address) {
        fprintf(stderr, "roost: %s has no %s: %s\n", library->soname, symbol, reason ? reason : "");
        abort();
    }
    return address;
}

// The libcurl functions Roost calls, forwarded to the library opened on first use (CLoader).
#define CURL_DISABLE_TYPECHECK
#include "shim.h"
#include "roost_loader.h"

ROOST_LIBRARY(libcurl, "libcurl.so.4");

const char *roost_curl_load(void) { return roost_library_load(&libcurl); }

ROOST_FORWARD(libcurl, CURLcode, curl_global_init, (long flags), (flags))
ROOST_FORWARD(libcurl, CURL *, curl_easy_init, (void), ())
ROOST_FORWARD_VOID(libcurl, curl_easy_cleanup, (CURL *handle), (handle))
ROOST_FORWARD(libcurl, CURLcode, curl_easy_perform, (CURL *handle), (handle))
ROOST_FORWARD(libcurl, const char *, curl_easy_strerror, (CURLcode code), (code))
ROOST_FORWARD(libcurl, struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *string), (list, string))
ROOST_FORWARD_VOID(libcurl, curl_slist_free_all, (struct curl_slist *list), (list))

#define SETOPT(handle, option, value) ROOST_REAL(libcurl, curl_easy_setopt)(handle, option, value)
#define GETINFO(handle, info, value) ROOST_REAL(libcurl, curl_easy_getinfo)(handle, info, value)

CURLcode roost_curl_setopt_long(CURL *handle, CURLoption option, long value) { return SETOPT(handle, option, value); }
CURLcode roost_curl_setopt_string(CURL *handle, CURLoption option, const char *value) { return SETOPT(handle, option, value); }
CURLcode roost_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) { return SETOPT(handle, option, value); }
CURLcode roost_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) { return SETOPT(handle, option, value); }
CURLcode roost_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) { return SETOPT(handle, option, value); }
CURLcode roost_curl_setopt_read_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *)) {
    return SETOPT(handle, CURLOPT_READFUNCTION, function);
}
CURLcode roost_curl_setopt_write_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *)) {
    return SETOPT(handle, CURLOPT_WRITEFUNCTION, function);
}
CURLcode roost_curl_setopt_header_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *)) {
    return SETOPT(handle, CURLOPT_HEADERFUNCTION, function);
}
CURLcode roost_curl_setopt_xferinfo_function(CURL *handle, int (*function)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return SETOPT(handle, CURLOPT_XFERINFOFUNCTION, function);
}
CURLcode roost_curl_setopt_ssl_ctx_function(CURL *handle, CURLcode (*function)(CURL *, void *, void *)) {
    return SETOPT(handle, CURLOPT_SSL_CTX_FUNCTION, function);
}
CURLcode roost_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) { return GETINFO(handle, info, value); }
CURLcode roost_curl_getinfo_string(CURL *handle, CURLINFO info, char **value) { return GETINFO(handle, info, value); }
CURLcode roost_curl_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) { return GETINFO(handle, info, value); }

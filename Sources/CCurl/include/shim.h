#pragma once
#include <curl/curl.h>

// libcurl is opened with dlopen on first use (curl.c; see CLoader): NULL when it is loaded, otherwise why not.
const char *roost_curl_load(void);

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call; one wrapper per argument type.
CURLcode roost_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode roost_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode roost_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode roost_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode roost_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode roost_curl_setopt_read_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *));
CURLcode roost_curl_setopt_write_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *));
CURLcode roost_curl_setopt_header_function(CURL *handle, size_t (*function)(char *, size_t, size_t, void *));
CURLcode roost_curl_setopt_xferinfo_function(CURL *handle, int (*function)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t));
CURLcode roost_curl_setopt_ssl_ctx_function(CURL *handle, CURLcode (*function)(CURL *, void *, void *));
CURLcode roost_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode roost_curl_getinfo_string(CURL *handle, CURLINFO info, char **value);
CURLcode roost_curl_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);

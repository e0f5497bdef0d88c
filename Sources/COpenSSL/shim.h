#pragma once
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/sha.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

// Many OpenSSL "functions" are macros over SSL_ctrl / BIO_ctrl, which Swift cannot import;
// these wrappers give them real, typed function signatures.

static inline int roost_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long roost_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline int roost_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}
static inline long roost_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
static inline int roost_sk_GENERAL_NAME_num(const GENERAL_NAMES *names) { return sk_GENERAL_NAME_num(names); }
static inline GENERAL_NAME *roost_sk_GENERAL_NAME_value(const GENERAL_NAMES *names, int index) {
    return sk_GENERAL_NAME_value(names, index);
}
// EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen; used by tests to mint throwaway certificates.
static inline EVP_PKEY *roost_EVP_EC_gen(const char *curve) { return EVP_EC_gen(curve); }
// XN_FLAG_RFC2253 is a compound macro that Swift does not import.
static inline int roost_X509_NAME_print_rfc2253(BIO *bio, const X509_NAME *name) {
    return X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
}
// Used by tests to force a TLS 1.2 server.
static inline int roost_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}
// Whether the handshake used the extended master secret (RFC 7627); tls-unique is only sound with it.
static inline long roost_SSL_get_extms_support(SSL *ssl) { return SSL_get_extms_support(ssl); }
// SSL_OP_NO_EXTENDED_MASTER_SECRET is built by a macro Swift does not import; used by tests to play an old server.
static inline void roost_SSL_CTX_disable_extms(SSL_CTX *ctx) { SSL_CTX_set_options(ctx, SSL_OP_NO_EXTENDED_MASTER_SECRET); }
// The errno an error-queue entry carries when a system call failed inside OpenSSL (fopen of a CA file: EMFILE,
// ENFILE, ENOMEM, …), else 0; and whether the entry is an allocation failure. ERR_SYSTEM_ERROR and
// ERR_R_MALLOC_FAILURE are macros Swift does not import.
static inline int roost_ERR_system_errno(unsigned long code) {
    return ERR_SYSTEM_ERROR(code) ? (int)ERR_GET_REASON(code) : 0;
}
static inline int roost_ERR_is_malloc_failure(unsigned long code) {
    return !ERR_SYSTEM_ERROR(code) && ERR_GET_REASON(code) == ERR_R_MALLOC_FAILURE;
}

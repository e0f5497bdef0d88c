#pragma once
#include <sys/types.h>
#include <netinet/in.h>
#include <arpa/nameser.h>
#include <resolv.h>

// Swift sees `__res_state` as glibc's function of that name (the thread's shared state), not the struct.
typedef struct __res_state roost_res_state;

// glibc renames these with #define (res_ninit -> __res_ninit, ...), which Swift cannot see through;
// the wrappers give Swift stable names and keep the per-call res_state (thread-safe) variants.
static inline int roost_res_ninit(res_state state) { return res_ninit(state); }
static inline void roost_res_nclose(res_state state) { res_nclose(state); }
static inline int roost_res_nquery(res_state state, const char *name, int klass, int type,
                                   unsigned char *answer, int answerLength) {
    return res_nquery(state, name, klass, type, answer, answerLength);
}
static inline int roost_dn_expand(const unsigned char *message, const unsigned char *end,
                                  const unsigned char *compressed, char *name, int nameLength) {
    return dn_expand(message, end, compressed, name, nameLength);
}
static inline int roost_ns_msg_count(ns_msg handle, ns_sect section) { return ns_msg_count(handle, section); }

// Route netlink, for noticing network changes (an address appears) and reconnecting at once.
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

static inline unsigned int roost_rtnetlink_groups(void) {
    return RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
}

#pragma once
// libomemo-c (Debian: libomemo-c-dev), Dino's fork of libsignal-protocol-c with OMEMO 2 support.
// pkg-config adds -I/usr/include/omemo, so its headers are included by their own names.
#include <signal_protocol.h>
#include <key_helper.h>
#include <session_builder.h>
#include <session_cipher.h>
#include <session_pre_key.h>
#include <session_record.h>
#include <session_state.h>
#include <protocol.h>
#include <curve.h>

// SIGNAL_UNREF is a macro over signal_type_unref with a cast Swift cannot express for opaque types.
static inline void roost_signal_unref(void *instance) {
    if (instance) signal_type_unref((signal_type_base *)instance);
}

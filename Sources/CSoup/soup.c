// The libsoup functions `roost serve` calls, forwarded to the library opened on first use (CLoader).
#include "shim.h"
#include "roost_loader.h"

ROOST_LIBRARY(libsoup, "libsoup-3.0.so.0");

const char *roost_soup_load(void) { return roost_library_load(&libsoup); }

// soup_server_new is variadic (property name/value pairs), which Swift cannot call.
SoupServer *roost_soup_server_new(void) {
    return ROOST_REAL(libsoup, soup_server_new)("server-header", "Roost", NULL);
}

ROOST_FORWARD(libsoup, SoupMessageHeaders *, soup_server_message_get_request_headers, (SoupServerMessage *msg), (msg))
ROOST_FORWARD(libsoup, gboolean, soup_server_accept_iostream, (SoupServer *server, GIOStream *stream, GSocketAddress *local_addr, GSocketAddress *remote_addr, GError **error), (server, stream, local_addr, remote_addr, error))
ROOST_FORWARD(libsoup, GSocketAddress *, soup_server_message_get_remote_address, (SoupServerMessage *msg), (msg))
ROOST_FORWARD_VOID(libsoup, soup_server_disconnect, (SoupServer *server), (server))
ROOST_FORWARD_VOID(libsoup, soup_server_add_handler, (SoupServer *server, const char *path, SoupServerCallback callback, gpointer user_data, GDestroyNotify destroy), (server, path, callback, user_data, destroy))
ROOST_FORWARD(libsoup, SoupMessageHeaders *, soup_server_message_get_response_headers, (SoupServerMessage *msg), (msg))
ROOST_FORWARD(libsoup, SoupMessageBody *, soup_server_message_get_request_body, (SoupServerMessage *msg), (msg))
ROOST_FORWARD(libsoup, SoupMessageBody *, soup_server_message_get_response_body, (SoupServerMessage *msg), (msg))
ROOST_FORWARD(libsoup, const char *, soup_server_message_get_method, (SoupServerMessage *msg), (msg))
ROOST_FORWARD_VOID(libsoup, soup_server_message_set_status, (SoupServerMessage *msg, guint status_code, const char *reason_phrase), (msg, status_code, reason_phrase))
ROOST_FORWARD(libsoup, GUri *, soup_server_message_get_uri, (SoupServerMessage *msg), (msg))
ROOST_FORWARD_VOID(libsoup, soup_server_message_set_response, (SoupServerMessage *msg, const char *content_type, SoupMemoryUse resp_use, const char *resp_body, gsize resp_length), (msg, content_type, resp_use, resp_body, resp_length))
ROOST_FORWARD(libsoup, const char *, soup_server_message_get_remote_host, (SoupServerMessage *msg), (msg))
ROOST_FORWARD_VOID(libsoup, soup_server_message_pause, (SoupServerMessage *msg), (msg))
ROOST_FORWARD_VOID(libsoup, soup_server_message_unpause, (SoupServerMessage *msg), (msg))
ROOST_FORWARD_VOID(libsoup, soup_message_headers_replace, (SoupMessageHeaders *hdrs, const char *name, const char *value), (hdrs, name, value))
ROOST_FORWARD(libsoup, const char *, soup_message_headers_get_one, (SoupMessageHeaders *hdrs, const char *name), (hdrs, name))
ROOST_FORWARD_VOID(libsoup, soup_message_headers_set_encoding, (SoupMessageHeaders *hdrs, SoupEncoding encoding), (hdrs, encoding))
ROOST_FORWARD_VOID(libsoup, soup_message_headers_set_content_type, (SoupMessageHeaders *hdrs, const char *content_type, GHashTable *params), (hdrs, content_type, params))
ROOST_FORWARD_VOID(libsoup, soup_message_body_set_accumulate, (SoupMessageBody *body, gboolean accumulate), (body, accumulate))
ROOST_FORWARD_VOID(libsoup, soup_message_body_append, (SoupMessageBody *body, SoupMemoryUse use, gconstpointer data, gsize length), (body, use, data, length))
ROOST_FORWARD_VOID(libsoup, soup_message_body_append_bytes, (SoupMessageBody *body, GBytes *buffer), (body, buffer))
ROOST_FORWARD(libsoup, GBytes *, soup_message_body_flatten, (SoupMessageBody *body), (body))
ROOST_FORWARD(libsoup, GHashTable *, soup_header_parse_semi_param_list, (const char *header), (header))
ROOST_FORWARD(libsoup, GHashTable *, soup_form_decode, (const char *encoded_form), (encoded_form))

// The gdk-pixbuf functions Roost calls (thumbnails), forwarded to the library opened on first use (CLoader).
#include "shim.h"
#include "roost_loader.h"

ROOST_LIBRARY(libpixbuf, "libgdk_pixbuf-2.0.so.0");

const char *roost_pixbuf_load(void) { return roost_library_load(&libpixbuf); }

ROOST_FORWARD(libpixbuf, GdkPixbufLoader *, gdk_pixbuf_loader_new_with_type, (const char *image_type, GError **error), (image_type, error))
ROOST_FORWARD(libpixbuf, gboolean, gdk_pixbuf_loader_write, (GdkPixbufLoader *loader, const guchar *buf, gsize count, GError **error), (loader, buf, count, error))
ROOST_FORWARD(libpixbuf, gboolean, gdk_pixbuf_loader_close, (GdkPixbufLoader *loader, GError **error), (loader, error))
ROOST_FORWARD(libpixbuf, GdkPixbuf *, gdk_pixbuf_loader_get_pixbuf, (GdkPixbufLoader *loader), (loader))
ROOST_FORWARD_VOID(libpixbuf, gdk_pixbuf_loader_set_size, (GdkPixbufLoader *loader, int width, int height), (loader, width, height))
ROOST_FORWARD(libpixbuf, GdkPixbuf *, gdk_pixbuf_apply_embedded_orientation, (GdkPixbuf *src), (src))
ROOST_FORWARD(libpixbuf, int, gdk_pixbuf_get_width, (const GdkPixbuf *pixbuf), (pixbuf))
ROOST_FORWARD(libpixbuf, int, gdk_pixbuf_get_height, (const GdkPixbuf *pixbuf), (pixbuf))
ROOST_FORWARD(libpixbuf, gboolean, gdk_pixbuf_get_has_alpha, (const GdkPixbuf *pixbuf), (pixbuf))
ROOST_FORWARD(libpixbuf, gboolean, gdk_pixbuf_savev, (GdkPixbuf *pixbuf, const char *filename, const char *type, char **option_keys, char **option_values, GError **error), (pixbuf, filename, type, option_keys, option_values, error))

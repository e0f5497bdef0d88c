// The gdk-pixbuf functions Roost calls (thumbnails), forwarded to the library opened on first use (CLoader).
#include "shim.h"
#include "roost_loader.h"

ROOST_LIBRARY(libpixbuf, "libgdk_pixbuf-2.0.so.0");

const char *roost_pixbuf_load(void) { return roost_library_load(&libpixbuf); }

ROOST_FORWARD(libpixbuf, GdkPixbufFormat *, gdk_pixbuf_get_file_info, (const char *filename, int *width, int *height), (filename, width, height))
ROOST_FORWARD(libpixbuf, GdkPixbuf *, gdk_pixbuf_new_from_file_at_scale, (const char *filename, int width, int height, gboolean preserve_aspect_ratio, GError **error), (filename, width, height, preserve_aspect_ratio, error))
ROOST_FORWARD(libpixbuf, GdkPixbuf *, gdk_pixbuf_apply_embedded_orientation, (GdkPixbuf *src), (src))
ROOST_FORWARD(libpixbuf, int, gdk_pixbuf_get_width, (const GdkPixbuf *pixbuf), (pixbuf))
ROOST_FORWARD(libpixbuf, int, gdk_pixbuf_get_height, (const GdkPixbuf *pixbuf), (pixbuf))
ROOST_FORWARD(libpixbuf, gboolean, gdk_pixbuf_get_has_alpha, (const GdkPixbuf *pixbuf), (pixbuf))
ROOST_FORWARD(libpixbuf, gboolean, gdk_pixbuf_savev, (GdkPixbuf *pixbuf, const char *filename, const char *type, char **option_keys, char **option_values, GError **error), (pixbuf, filename, type, option_keys, option_values, error))

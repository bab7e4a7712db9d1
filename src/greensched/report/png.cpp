// Rasterising SVG with librsvg onto a cairo image surface, written out by cairo's PNG writer.
// Everything librsvg and cairo hand out is owned by a unique_ptr, so each error path frees it.
#include "greensched/report/png.hpp"

#include <cmath>
#include <memory>

#include <cairo.h>
#include <fmt/format.h>
#include <librsvg/rsvg.h>

namespace greensched::report {
namespace {

struct GErrorFree {
  void operator()(GError* e) const { g_error_free(e); }
};
struct GObjectUnref {
  void operator()(RsvgHandle* h) const { g_object_unref(h); }
};
struct SurfaceDestroy {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct CairoDestroy {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};
using ErrorPtr = std::unique_ptr<GError, GErrorFree>;

std::string gerror_text(GError* error) {
  ErrorPtr owned(error);
  return owned != nullptr && owned->message != nullptr ? owned->message : "unknown error";
}

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

Result<std::string> svg_to_png(std::string_view svg, double scale) {
  if (svg.empty()) return Error{"cannot draw the SVG: it is empty"};
  if (!std::isfinite(scale) || scale <= 0 || scale > 16) {
    return Error{fmt::format("cannot draw the SVG: scale {} is not in (0, 16]", scale)};
  }
  GError* error = nullptr;
  std::unique_ptr<RsvgHandle, GObjectUnref> handle(rsvg_handle_new_from_data(
      reinterpret_cast<const guint8*>(svg.data()), static_cast<gsize>(svg.size()), &error));
  if (handle == nullptr) return Error{"cannot read the SVG: " + gerror_text(error)};
  rsvg_handle_set_dpi(handle.get(), 96);
  double width = 0;
  double height = 0;
  if (!rsvg_handle_get_intrinsic_size_in_pixels(handle.get(), &width, &height)) {
    // No absolute width and height: the viewBox's, if there is one.
    gboolean has_viewbox = FALSE;
    RsvgRectangle viewbox{0, 0, 0, 0};
    rsvg_handle_get_intrinsic_dimensions(handle.get(), nullptr, nullptr, nullptr, nullptr,
                                         &has_viewbox, &viewbox);
    if (!has_viewbox) return Error{"cannot draw the SVG: it has no width, height or viewBox"};
    width = viewbox.width;
    height = viewbox.height;
  }
  const double w = std::ceil(width * scale);
  const double h = std::ceil(height * scale);
  if (!(w >= 1 && h >= 1 && w <= kMaxPngSide && h <= kMaxPngSide)) {
    return Error{fmt::format("cannot draw the SVG: {} x {} pixels is outside 1..{} a side", w, h,
                             kMaxPngSide)};
  }
  std::unique_ptr<cairo_surface_t, SurfaceDestroy> surface(
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, static_cast<int>(w), static_cast<int>(h)));
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS) {
    return Error{fmt::format("cannot draw the SVG: {}",
                             cairo_status_to_string(cairo_surface_status(surface.get())))};
  }
  std::unique_ptr<cairo_t, CairoDestroy> cr(cairo_create(surface.get()));
  cairo_set_source_rgb(cr.get(), 1, 1, 1);
  cairo_paint(cr.get());
  cairo_scale(cr.get(), scale, scale);
  const RsvgRectangle viewport{0, 0, width, height};
  if (!rsvg_handle_render_document(handle.get(), cr.get(), &viewport, &error)) {
    return Error{"cannot draw the SVG: " + gerror_text(error)};
  }
  if (cairo_status(cr.get()) != CAIRO_STATUS_SUCCESS) {
    return Error{
        fmt::format("cannot draw the SVG: {}", cairo_status_to_string(cairo_status(cr.get())))};
  }
  cairo_surface_flush(surface.get());
  std::string png;
  const cairo_status_t written =
      cairo_surface_write_to_png_stream(surface.get(), append_bytes, &png);
  if (written != CAIRO_STATUS_SUCCESS) {
    return Error{fmt::format("cannot write the PNG: {}", cairo_status_to_string(written))};
  }
  return png;
}

}  // namespace greensched::report

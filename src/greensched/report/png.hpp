// SVG to PNG with librsvg and cairo: the image `explain --chart FILE.png` writes. The SVG is
// drawn at its own width and height (times `scale`) on a white background; a malformed SVG, one
// without a size, or one too large to draw is an error, never a crash. The same SVG gives the
// same bytes.
#pragma once

#include <string>
#include <string_view>

#include "greensched/core/status.hpp"

namespace greensched::report {

// The largest image side drawn, in pixels.
inline constexpr int kMaxPngSide = 8192;

// The PNG file's bytes.
Result<std::string> svg_to_png(std::string_view svg, double scale = 1.0);

}  // namespace greensched::report

// SVG to PNG (report/png): a PNG of the SVG's size (times the scale) for a decision chart, the
// same bytes for the same SVG, and an error, never a crash, for a malformed or unsized SVG.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "greensched/report/decision_chart.hpp"
#include "greensched/report/png.hpp"

// Fontconfig (under librsvg's text) keeps its font cache for the life of the process, which
// LeakSanitizer reports at exit in the ASan+UBSan build of these tests: not a leak of ours.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libfontconfig.so\n";
}

namespace greensched::report::png_test {
namespace {

const std::string kPngSignature("\x89PNG\r\n\x1a\n", 8);

// A big-endian 32-bit number at `at` (the IHDR chunk's width is at 16, its height at 20).
uint32_t be32(const std::string& bytes, std::size_t at) {
  uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

// The number in attribute `name` of the SVG's opening tag.
double svg_attribute(const std::string& svg, const std::string& name) {
  const std::string key = " " + name + "=\"";
  return std::stod(svg.substr(svg.find(key) + key.size()));
}

std::string chart() {
  return decision_chart_svg(nlohmann::json::parse(R"({
    "pod": "q", "chosen_node": null,
    "request": {"cpu_milli": 8000, "memory_mib": 1024, "num_gpu": 1, "gpu_milli": 800},
    "reason_counts_by_type": {"T4": {"insufficient cpu": 1, "insufficient memory": 2}}
  })"));
}

TEST(Png, ADecisionChartAtItsSize) {
  const std::string svg = chart();
  ASSERT_FALSE(svg.empty());
  auto png = svg_to_png(svg);
  ASSERT_TRUE(png.ok()) << png.error();
  const std::string& bytes = png.value();
  ASSERT_GT(bytes.size(), 24u);
  EXPECT_EQ(bytes.substr(0, 8), kPngSignature);
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  const double width = svg_attribute(svg, "width");
  const double height = svg_attribute(svg, "height");
  EXPECT_EQ(be32(bytes, 16), static_cast<uint32_t>(std::ceil(width)));
  EXPECT_EQ(be32(bytes, 20), static_cast<uint32_t>(std::ceil(height)));
  auto twice = svg_to_png(svg, 2);
  ASSERT_TRUE(twice.ok()) << twice.error();
  EXPECT_EQ(be32(twice.value(), 16), static_cast<uint32_t>(std::ceil(width * 2)));
  EXPECT_EQ(be32(twice.value(), 20), static_cast<uint32_t>(std::ceil(height * 2)));
}

TEST(Png, SameSvgSameBytes) {
  const std::string svg = chart();
  auto first = svg_to_png(svg);
  auto second = svg_to_png(svg);
  ASSERT_TRUE(first.ok()) << first.error();
  ASSERT_TRUE(second.ok()) << second.error();
  EXPECT_EQ(first.value(), second.value());
}

TEST(Png, ASizeFromTheViewBox) {
  auto png = svg_to_png(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 30 20\"><rect width=\"30\" "
      "height=\"20\" fill=\"#4e79a7\"/></svg>");
  ASSERT_TRUE(png.ok()) << png.error();
  EXPECT_EQ(be32(png.value(), 16), 30u);
  EXPECT_EQ(be32(png.value(), 20), 20u);
}

TEST(Png, MalformedOrUnsizedSvgIsAnError) {
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (const std::string& svg :
       {std::string(), std::string("not an svg"), std::string("<svg ") + ns,
        "<svg " + ns + " width=\"10\" height=\"10\"><rect></svg>",
        "<svg " + ns + "><rect width=\"10\" height=\"10\"/></svg>",
        "<svg " + ns + " width=\"0\" height=\"10\"/>",
        "<svg " + ns + " width=\"100000\" height=\"10\"/>",
        std::string("<html><body>no svg</body></html>"), std::string("\0\0\0", 3)}) {
    auto png = svg_to_png(svg);
    EXPECT_FALSE(png.ok()) << svg;
    if (!png.ok()) {
      EXPECT_FALSE(png.error().empty());
    }
  }
  EXPECT_FALSE(svg_to_png(chart(), 0).ok());
  EXPECT_FALSE(svg_to_png(chart(), std::nan("")).ok());
}

}  // namespace
}  // namespace greensched::report::png_test

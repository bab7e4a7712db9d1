#include "greensched/serve/json_text.hpp"

#include <cstdint>

namespace greensched::serve {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not valid.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  std::size_t n = 0;
  uint32_t cp = 0;
  if (b0 < 0x80) return 1;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms, surrogates and values beyond Unicode are invalid.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
    return 0;
  }
  return n;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  // Plain printable ASCII (node names, most messages) is copied in one go.
  std::size_t plain = 0;
  while (plain < s.size()) {
    const auto u = static_cast<uint8_t>(s[plain]);
    if (u < 0x20 || u >= 0x80 || u == '"' || u == '\\') break;
    ++plain;
  }
  out.append(s.substr(0, plain));
  for (std::size_t i = plain; i < s.size();) {
    const char c = s[i];
    const auto u = static_cast<uint8_t>(c);
    if (u >= 0x80) {
      const std::size_t n = utf8_length(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 0xF];
        } else {
          out += c;
        }
    }
    ++i;
  }
  out += '"';
}

}  // namespace greensched::serve

#include "greensched/core/utc_time.hpp"

#include <charconv>
#include <chrono>
#include <optional>

#include <fmt/format.h>

namespace greensched {
namespace {

constexpr int64_t kDay = 86400;

// `n` ASCII digits at text[pos], or nullopt.
std::optional<unsigned> digits(std::string_view text, std::size_t pos, std::size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  unsigned v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(text[i] - '0');
  }
  return v;
}

// "YYYY-MM-DD" at the start of `text`, or nullopt.
std::optional<std::chrono::year_month_day> date_part(std::string_view text) {
  const auto year = digits(text, 0, 4);
  const auto month = digits(text, 5, 2);
  const auto day = digits(text, 8, 2);
  if (!year || !month || !day || text[4] != '-' || text[7] != '-') return std::nullopt;
  return std::chrono::year{static_cast<int>(*year)} / std::chrono::month{*month} /
         std::chrono::day{*day};
}

int64_t epoch_days(const std::chrono::year_month_day& ymd) {
  return std::chrono::sys_days{ymd}.time_since_epoch().count();
}

}  // namespace

Result<int64_t> parse_utc_time(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Error{
        fmt::format("bad time '{}': {} (expected YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS], "
                    "YYYY-MM-DDTHH:MM[:SS][Z] or integer epoch seconds)",
                    text, why)};
  };
  if (text.empty()) return bad("empty");
  // Plain integer: epoch seconds.
  const std::string_view unsigned_part = text.front() == '-' ? text.substr(1) : text;
  if (!unsigned_part.empty() &&
      unsigned_part.find_first_not_of("0123456789") == std::string_view::npos) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && end == text.data() + text.size()) return v;
    return bad("not an integer");
  }
  const auto ymd = date_part(text);
  if (!ymd) return bad("not a date");
  if (!ymd->month().ok()) return bad("month out of range");
  if (!ymd->ok()) return bad("day out of range");
  int64_t secs = epoch_days(*ymd) * kDay;
  if (text.size() == 10) return secs;

  if (text[10] != ' ' && text[10] != 'T') return bad("expected ' ' or 'T' after the date");
  std::string_view rest = text.substr(11);
  if (!rest.empty() && rest.back() == 'Z') {
    if (text[10] != 'T') return bad("'Z' needs the 'T' separator");
    rest.remove_suffix(1);
  }
  if (rest.size() != 5 && rest.size() != 8) return bad("expected HH:MM or HH:MM:SS");
  const auto hour = digits(rest, 0, 2);
  const auto minute = digits(rest, 3, 2);
  if (!hour || !minute || rest[2] != ':') return bad("expected HH:MM or HH:MM:SS");
  unsigned second = 0;
  if (rest.size() == 8) {
    const auto s = digits(rest, 6, 2);
    if (!s || rest[5] != ':') return bad("expected HH:MM:SS");
    second = *s;
  }
  if (*hour > 23 || *minute > 59 || second > 59) return bad("time of day out of range");
  secs += static_cast<int64_t>(*hour) * 3600 + static_cast<int64_t>(*minute) * 60 + second;
  return secs;
}

Result<int64_t> parse_offset_time(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Error{
        fmt::format("bad time '{}': {} (expected YYYY-MM-DD[T| ]HH:MM[:SS] with an optional Z or "
                    "+HH:MM offset)",
                    text, why)};
  };
  const auto ymd = date_part(text);
  if (!ymd) return bad("no date");
  if (text.size() < 16 || (text[10] != 'T' && text[10] != ' ') || text[13] != ':') {
    return bad("no HH:MM time");
  }
  const auto hour = digits(text, 11, 2);
  const auto minute = digits(text, 14, 2);
  if (!hour || !minute) return bad("no HH:MM time");
  std::size_t pos = 16;
  unsigned second = 0;
  if (pos < text.size() && text[pos] == ':') {
    const auto s = digits(text, pos + 1, 2);
    if (!s) return bad("bad seconds");
    second = *s;
    pos += 3;
  }
  int64_t offset_s = 0;
  const std::string_view rest = text.substr(pos);
  if (!rest.empty() && rest != "Z") {
    const auto oh = digits(rest, 1, 2);
    const auto om = digits(rest, 4, 2);
    if (rest.size() != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' || !oh || !om ||
        *oh > 14 || *om > 59) {
      return bad("trailing text is not Z or a +HH:MM offset");
    }
    offset_s = (rest[0] == '-' ? -1 : 1) * static_cast<int64_t>(*oh * 3600 + *om * 60);
  }
  if (*hour > 23 || *minute > 59 || second > 59) return bad("time of day out of range");
  if (!ymd->ok()) return bad("no such date");
  return epoch_days(*ymd) * kDay + static_cast<int64_t>(*hour) * 3600 +
         static_cast<int64_t>(*minute) * 60 + second - offset_s;
}

std::string format_utc_time(int64_t epoch_s) {
  const std::chrono::sys_seconds t{std::chrono::seconds{epoch_s}};
  const auto day = std::chrono::floor<std::chrono::days>(t);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss hms{t - day};
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     hms.hours().count(), hms.minutes().count(), hms.seconds().count());
}

}  // namespace greensched

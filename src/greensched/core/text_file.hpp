// Reading and writing whole files, with errors that name the path. Every reader and writer of
// CSV, JSON and model files goes through here, so a missing file, a full disk or a missing
// directory reads the same everywhere.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "greensched/core/status.hpp"

namespace greensched {

// Reads a whole file; the error names the path.
Result<std::string> read_file(const std::string& path);

// Writes `text` to `path`, replacing it; the folder it goes in is created when absent (so are
// write_stream_file's and write_text_file_atomic's).
Status write_text_file(const std::string& path, std::string_view text);

// Writes what `write` puts into the stream to `path`, replacing it: a large report goes to
// disk as it is made instead of being held whole in memory first.
Status write_stream_file(const std::string& path, const std::function<void(std::ostream&)>& write);

// Writes to PATH.tmp, then renames it over `path`, so a crash never leaves half a file.
Status write_text_file_atomic(const std::string& path, std::string_view text);

// Creates `dir` (and its parents) and writes each (name, text) into it.
Status write_text_files(const std::string& dir,
                        const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace greensched

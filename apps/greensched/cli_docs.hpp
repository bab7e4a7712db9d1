// The command line's reference, generated from the same CLI11 definition as --help: the
// Markdown of docs/CLI.md, the man pages, bash and zsh completion, and the list of every
// command's flags (what the docs test checks docs/CLI.md against). Hidden options (the
// deprecated spellings) and hidden commands are left out of all of them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace greensched::app {

// What `greensched --help` ends with, and docs/CLI.md's conventions section: the exit codes
// and the rules every command follows.
extern const char kExitCodesHelp[];

std::string markdown_reference(const CLI::App& app);

// One man page per command ("greensched" itself, then "greensched-simulate", ...): file name
// (e.g. greensched-simulate.1) and roff text.
std::vector<std::pair<std::string, std::string>> man_pages(const CLI::App& app);

std::string bash_completion(const CLI::App& app);
std::string zsh_completion(const CLI::App& app);

// "simulate --seeds" lines, one per documented flag name of every command.
std::string flag_list(const CLI::App& app);

// Names the values of the shared options in --help and the docs: --out and --data-dir DIR,
// --seeds SEEDS, --power-down-idle off|SECONDS,... Run once every command is added.
void name_values(CLI::App& app);

// The hidden commands `completion bash|zsh` and `cli-docs` (--markdown FILE, --man DIR,
// --flags), which print or write the above for `app`.
Action add_completion_command(CLI::App& app);
Action add_cli_docs_command(CLI::App& app);

}  // namespace greensched::app

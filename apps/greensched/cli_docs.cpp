// The command line's reference generated from its CLI11 definition (cli_docs.hpp).
#include "cli_docs.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "command_util.hpp"
#include "greensched/core/text_file.hpp"

namespace greensched::app {

const char kExitCodesHelp[] =
    "Exit codes: 0 done; 1 bad input (a file or value that is wrong or missing); 2 bad\n"
    "command line (usage); 70 internal error (a bug); 74 reading or writing failed.\n"
    "Every error is one line on stderr: \"greensched COMMAND: what was wrong\".";

namespace {

// The conventions section of docs/CLI.md and the main man page.
constexpr const char* kConventions[] = {
    "`--seeds` takes a list and/or ranges (`42-51`, `1,5,7-9`); a command that runs with one "
    "seed says so and refuses more than one.",
    "`--tune` is a run's inflation, arrived GPU requests as a multiple of the cluster's GPU "
    "capacity; 1.3 wherever it is taken.",
    "Times are durations with units: `30m`, `12h`, `1h30m`, `90s`, `2d`. A bare number keeps "
    "the unit its option always had, which the option's help names: hours for `multi --slack`, "
    "seconds elsewhere (`--ls-bound 600` is `--ls-bound 10m`).",
    "`--power-down-idle` is a comma list of `off` or durations; a command that runs one setting "
    "refuses more than one.",
    "`--out` is always a folder; each command says which files it writes there. Metavars say "
    "what a value is: `FILE`, `DIR`, `DURATION`, or the values it takes (`fifo|backfill`).",
    "`--record FILE` is the decision file of every command that writes one (`simulate`, "
    "`multi`, `serve`, `dispatch`); `explain --record FILE` reads any of them.",
    "`-q` prints no table and no progress: only `--json` (when given), the files and errors. "
    "Tables are keyed under them: each column's header, its CSV column and its meaning.",
    "Listeners (`serve`, `dispatch`, `monitor`) take loopback addresses by default; any other "
    "needs TLS and a token, or `--insecure`.",
    "Every command's `--help` ends with an example.",
    "Relative data paths (`--data-dir`) start at `$GREENSCHED_DATA`, else "
    "`PREFIX/share/greensched/data` for an installed binary, else the source tree's "
    "`../shared/data`; never at the working directory.",
    "Deprecated spellings (`--seed`, `--out FILE`, `bound --run-tune`, `dispatch --journal` and "
    "`--journal-*`) still work and print a "
    "note on stderr; they will be removed in the next release.",
};

struct Command {
  std::string path;  // "simulate", "convert kubectl"
  const CLI::App* app;
};

bool visible(const CLI::App* sub) {
  return !sub->get_group().empty();
}

// Every visible command, depth first, in the order they were added.
void collect(const CLI::App* app, const std::string& prefix, std::vector<Command>& out) {
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    if (!visible(sub)) continue;
    const std::string path = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    out.push_back(Command{path, sub});
    collect(sub, path, out);
  }
}

std::vector<Command> commands_of(const CLI::App& app) {
  std::vector<Command> out;
  collect(&app, "", out);
  return out;
}

// The documented options of a command: visible, not --help.
std::vector<const CLI::Option*> options_of(const CLI::App* app) {
  std::vector<const CLI::Option*> out;
  for (const CLI::Option* opt : app->get_options([](const CLI::Option*) { return true; })) {
    if (opt == app->get_help_ptr() || opt->get_group().empty()) continue;
    if (opt->get_lnames().empty() && opt->get_snames().empty()) continue;  // positional
    out.push_back(opt);
  }
  return out;
}

std::vector<std::string> names_of(const CLI::Option* opt) {
  std::vector<std::string> names;
  for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
  for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
  return names;
}

bool is_flag(const CLI::Option* opt) {
  return opt->get_items_expected_max() == 0;
}

// "SEEDS", "FILE", "{inflation,replay}": what the value looks like.
std::string value_of(const CLI::Option* opt) {
  if (is_flag(opt)) return "";
  std::string type = opt->get_type_name();
  if (const std::size_t colon = type.find(':'); colon != std::string::npos) {
    type = type.substr(colon + 1);  // TEXT:FILE -> FILE
  }
  if (opt->get_items_expected_max() > 1) type += " ...";
  return type;
}

// The values an option accepts when it checks them against a set ("TEXT:{fifo,backfill}"), for
// completion; empty otherwise.
std::vector<std::string> choices_of(const CLI::Option* opt) {
  const std::string type = opt->get_type_name();
  const std::size_t open = type.find('{');
  const std::size_t close = type.find('}', open);
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos) {
    // "fifo|backfill|priority": lower-case words between bars (not "off|DURATION,...").
    if (type.find('|') == std::string::npos ||
        type.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-|") != std::string::npos) {
      return out;
    }
    std::string item;
    for (char c : type + "|") {
      if (c == '|') {
        out.push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
  }
  if (open == std::string::npos || close == std::string::npos) return out;
  std::string item;
  for (std::size_t i = open + 1; i <= close; ++i) {
    if (type[i] == ',' || type[i] == '}') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item += type[i];
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string trim_right(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string footer_of(const CLI::App* app) {
  return trim_right(app->get_footer());
}

// ---- Markdown -------------------------------------------------------------------------------

std::string md_option(const CLI::Option* opt) {
  std::string names;
  for (const std::string& n : names_of(opt)) names += (names.empty() ? "" : ", ") + ("`" + n + "`");
  std::string out = "- " + names;
  if (const std::string v = value_of(opt); !v.empty()) out += " " + v;
  std::vector<std::string> notes;
  if (opt->get_required()) notes.push_back("required");
  if (!opt->get_default_str().empty()) notes.push_back("default `" + opt->get_default_str() + "`");
  if (!notes.empty()) out += " (" + join(notes, ", ") + ")";
  std::string desc = opt->get_description();
  for (char& c : desc) {
    if (c == '\n') c = ' ';
  }
  return out + ": " + desc + "\n";
}

}  // namespace

std::string markdown_reference(const CLI::App& app) {
  std::string out =
      "# greensched command line\n\n"
      "<!-- Generated from the command-line definition by `greensched cli-docs --markdown`; "
      "do not edit. Regenerate with `cmake --build BUILD --target cli-docs`. -->\n\n"
      "Every command takes `--help`; `greensched --help` lists the commands.\n\n"
      "## Conventions\n\n";
  for (const char* c : kConventions) out += fmt::format("- {}\n", c);
  out +=
      "\n## Exit codes\n\n"
      "| code | meaning |\n|---|---|\n"
      "| 0 | done |\n"
      "| 1 | bad input: a file or value that is wrong or missing |\n"
      "| 2 | bad command line (usage) |\n"
      "| 70 | internal error (a bug) |\n"
      "| 74 | reading or writing failed |\n\n"
      "Every error is one line on stderr: `greensched COMMAND: what was wrong`.\n\n"
      "## Commands\n\n| command | what it does |\n|---|---|\n";
  const std::vector<Command> commands = commands_of(app);
  for (const Command& c : commands) {
    out += fmt::format("| `{}` | {} |\n", c.path, c.app->get_description());
  }
  for (const Command& c : commands) {
    out += fmt::format("\n## greensched {}\n\n{}\n", c.path, c.app->get_description());
    if (const std::string footer = footer_of(c.app); !footer.empty()) {
      out += "\n```text\n" + footer + "\n```\n";
    }
    const auto options = options_of(c.app);
    if (!options.empty()) {
      out += "\n";
      for (const CLI::Option* opt : options) out += md_option(opt);
    }
  }
  return out;
}

// ---- man pages ------------------------------------------------------------------------------

namespace {

// Roff text: backslashes and hyphens escaped, no line starting with a control character.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string man_header(const std::string& name, const std::string& summary) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return fmt::format(
      ".TH {} 1 \"\" \"greensched 0.1.0\" \"greensched manual\"\n.SH NAME\n{} \\- {}\n", upper,
      roff(name), roff(summary));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> man_pages(const CLI::App& app) {
  std::vector<std::pair<std::string, std::string>> pages;
  const std::vector<Command> commands = commands_of(app);
  std::string main = man_header("greensched", "schedule AI jobs on GPU clusters, and say why");
  main += ".SH SYNOPSIS\n\\fBgreensched\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n";
  main += ".SH DESCRIPTION\n.nf\n" + roff(app.get_description()) + "\n.fi\n.SH COMMANDS\n";
  for (const Command& c : commands) {
    std::string page = "greensched-" + c.path;
    for (char& ch : page) {
      if (ch == ' ') ch = '-';
    }
    main += fmt::format(".TP\n\\fB{}\\fR\n{} See \\fB{}\\fR(1).\n", roff(c.path),
                        roff(c.app->get_description()), roff(page));
  }
  main += ".SH CONVENTIONS\n";
  for (const char* conv : kConventions) {
    std::string text = conv;
    std::string plain;
    for (char ch : text) {
      if (ch != '`') plain += ch;
    }
    main += ".IP \\(bu 2\n" + roff(plain) + "\n";
  }
  main += ".SH EXIT STATUS\n.nf\n" + roff(kExitCodesHelp) + "\n.fi\n";
  main += ".SH ENVIRONMENT\n.TP\n\\fBGREENSCHED_DATA\\fR\nwhere relative data paths start.\n";
  pages.emplace_back("greensched.1", main);

  for (const Command& c : commands) {
    std::string name = "greensched-" + c.path;
    for (char& ch : name) {
      if (ch == ' ') ch = '-';
    }
    std::string page = man_header(name, c.app->get_description());
    page += fmt::format(".SH SYNOPSIS\n\\fBgreensched {}\\fR [\\fIOPTIONS\\fR]\n", roff(c.path));
    if (const std::string footer = footer_of(c.app); !footer.empty()) {
      page += ".SH DESCRIPTION\n.nf\n" + roff(footer) + "\n.fi\n";
    }
    const auto options = options_of(c.app);
    if (!options.empty()) page += ".SH OPTIONS\n";
    for (const CLI::Option* opt : options) {
      std::vector<std::string> names;
      for (const std::string& n : names_of(opt)) names.push_back("\\fB" + roff(n) + "\\fR");
      std::string head = join(names, ", ");
      if (const std::string v = value_of(opt); !v.empty()) head += " \\fI" + roff(v) + "\\fR";
      std::string desc = opt->get_description();
      if (opt->get_required()) desc += " (required)";
      if (!opt->get_default_str().empty()) desc += " (default: " + opt->get_default_str() + ")";
      page += ".TP\n" + head + "\n" + roff(desc) + "\n";
    }
    page += ".SH EXIT STATUS\n.nf\n" + roff(kExitCodesHelp) + "\n.fi\n";
    page += ".SH SEE ALSO\n\\fBgreensched\\fR(1)\n";
    pages.emplace_back(name + ".1", page);
  }
  return pages;
}

// ---- completion -----------------------------------------------------------------------------

namespace {

std::vector<const CLI::App*> visible_children(const CLI::App* app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    if (visible(sub)) out.push_back(sub);
  }
  return out;
}

std::string words_of(const CLI::App* app) {
  std::vector<std::string> words;
  for (const CLI::App* sub : visible_children(app)) words.push_back(sub->get_name());
  for (const CLI::Option* opt : options_of(app)) {
    for (const std::string& n : names_of(opt)) words.push_back(n);
  }
  words.push_back("--help");
  return join(words, " ");
}

// A zsh _arguments description: no brackets, colons or quotes.
std::string zsh_text(std::string text) {
  if (const std::size_t cut = text.find_first_of(".;("); cut != std::string::npos) {
    text = text.substr(0, cut);
  }
  std::string out;
  for (char c : text) {
    if (c == '\n') c = ' ';
    if (c == '[' || c == ']' || c == ':' || c == '\'' || c == '`' || c == '\\' || c == '$') {
      continue;
    }
    out += c;
  }
  return trim_right(out);
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
  const std::vector<Command> commands = commands_of(app);
  std::string names;
  for (const Command& c : commands) names += (names.empty() ? "" : "|") + c.app->get_name();
  std::string out =
      "# bash completion for greensched (generated by `greensched completion bash`)\n"
      "_greensched() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case \"${COMP_WORDS[i]}\" in\n"
      "      -*) ;;\n"
      "      *)\n"
      "        case \"${path:+$path }${COMP_WORDS[i]}\" in\n";
  std::string paths;
  for (const Command& c : commands) paths += (paths.empty() ? "" : "|") + ("\"" + c.path + "\"");
  out += "          " + paths + ") path=\"${path:+$path }${COMP_WORDS[i]}\" ;;\n";
  out +=
      "        esac ;;\n"
      "    esac\n"
      "  done\n"
      "  local prev=\"${COMP_WORDS[COMP_CWORD - 1]}\"\n"
      "  case \"$path $prev\" in\n";
  for (const Command& c : commands) {
    for (const CLI::Option* opt : options_of(c.app)) {
      const std::vector<std::string> choices = choices_of(opt);
      if (choices.empty()) continue;
      for (const std::string& n : names_of(opt)) {
        out +=
            fmt::format("    \"{} {}\") COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return ;;\n",
                        c.path, n, join(choices, " "));
      }
    }
  }
  out +=
      "  esac\n"
      "  local words\n"
      "  case \"$path\" in\n";
  out += "    \"\") words=\"" + words_of(&app) + " --version\" ;;\n";
  for (const Command& c : commands) {
    out += "    \"" + c.path + "\") words=\"" + words_of(c.app) + "\" ;;\n";
  }
  out +=
      "  esac\n"
      "  if [[ -z \"$path\" || \"$cur\" == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "  else\n"
      "    COMPREPLY=()\n"
      "  fi\n"
      "}\n"
      "complete -o default -F _greensched greensched\n";
  (void)names;
  return out;
}

std::string zsh_completion(const CLI::App& app) {
  std::string out =
      "#compdef greensched\n"
      "# zsh completion for greensched (generated by `greensched completion zsh`)\n\n";
  const std::vector<Command> commands = commands_of(app);
  // One function per command: its options, or its own subcommands.
  const auto function_name = [](const std::string& path) {
    std::string f = "_greensched";
    for (char c : path) f += (c == ' ' || c == '-') ? '_' : c;
    return f;
  };
  const auto emit = [&](const std::string& path, const CLI::App* cmd) {
    std::string body = function_name(path) + "() {\n";
    const auto children = visible_children(cmd);
    if (!children.empty()) {
      body += "  local -a commands\n  commands=(\n";
      for (const CLI::App* sub : children) {
        body += fmt::format("    '{}:{}'\n", sub->get_name(), zsh_text(sub->get_description()));
      }
      body +=
          "  )\n"
          "  if (( CURRENT == 2 )); then\n"
          "    _describe -t commands 'greensched command' commands\n"
          "    _arguments '--help[print help]' '--version[print the version]'\n"
          "    return\n"
          "  fi\n"
          "  local sub=${words[2]}\n"
          "  shift words\n"
          "  (( CURRENT-- ))\n"
          "  case $sub in\n";
      for (const CLI::App* sub : children) {
        const std::string sub_path = path.empty() ? sub->get_name() : path + " " + sub->get_name();
        body += fmt::format("    {}) {} ;;\n", sub->get_name(), function_name(sub_path));
      }
      body += "  esac\n}\n\n";
      return body;
    }
    body += "  _arguments -s \\\n    '--help[print help]' \\\n";
    for (const CLI::Option* opt : options_of(cmd)) {
      const std::string desc = zsh_text(opt->get_description());
      const std::string type = opt->get_type_name();
      const bool file = type.find("FILE") != std::string::npos ||
                        type.find("DIR") != std::string::npos ||
                        type.find("PATH") != std::string::npos;
      const std::vector<std::string> choices = choices_of(opt);
      const std::string action = is_flag(opt)       ? ""
                                 : !choices.empty() ? ":value:(" + join(choices, " ") + ")"
                                 : file             ? ":value:_files"
                                                    : ":value: ";
      const std::string repeat = opt->get_items_expected_max() > 1 ? "*" : "";
      for (const std::string& n : names_of(opt)) {
        body += fmt::format("    '{}{}[{}]{}' \\\n", repeat, n, desc, action);
      }
    }
    body += "    '*:file:_files'\n}\n\n";
    return body;
  };
  out += emit("", &app);
  for (const Command& c : commands) out += emit(c.path, c.app);
  out += "_greensched \"$@\"\n";
  return out;
}

std::string flag_list(const CLI::App& app) {
  std::string out;
  for (const Command& c : commands_of(app)) {
    for (const CLI::Option* opt : options_of(c.app)) {
      for (const std::string& n : names_of(opt)) out += c.path + " " + n + "\n";
    }
  }
  return out;
}

namespace {

// Options that name a file, whatever their validators say.
bool names_a_file(const CLI::Option* opt) {
  for (const char* name : {"nodes",        "pods",        "fleet",           "config",
                           "record",       "power-model", "port-file",       "tls-cert",
                           "tls-key",      "client-ca",   "auth-token-file", "kube-token-file",
                           "kube-ca-file", "nodes-json",  "narrator-log",    "checkpoint",
                           "base",         "samples",     "node-events",     "jsonl",
                           "markdown"}) {
    if (opt->check_lname(name)) return true;
  }
  return false;
}

// The validators' own words, dropped from the metavar: "TEXT:FILE" is FILE, "INT:INT in [1 -
// 60]" is INT (the range goes to the description), "TEXT:{fifo,backfill}" is fifo|backfill.
void plain_metavar(CLI::Option* opt) {
  std::string type = opt->get_type_name();
  const bool duration = type.find("DURATION") != std::string::npos;
  std::string range;
  std::string choices;
  for (int i = 0;; ++i) {
    CLI::Validator* validator = nullptr;
    try {
      validator = opt->get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      break;
    }
    const std::string desc = validator->get_description();
    if (const std::size_t open = desc.find(" in ["); open != std::string::npos) {
      range = desc.substr(open + 5, desc.size() - open - 6);  // "1 - 60"
    }
    if (desc.starts_with("{") || desc.starts_with("value in {")) {
      const std::size_t open = desc.find('{');
      const std::size_t close = desc.find('}', open);
      std::string item;
      for (std::size_t k = open + 1; k <= close; ++k) {
        if (desc[k] == ',' || desc[k] == '}') {
          if (!item.empty()) choices += (choices.empty() ? "" : "|") + item;
          item.clear();
        } else if (desc.compare(k, 2, "->") == 0) {
          k = desc.find_first_of(",}", k) - 1;  // "auto->0": the name alone
        } else {
          item += desc[k];
        }
      }
    }
    validator->description("");
  }
  if (duration) return;
  if (names_a_file(opt) || type.find("FILE") != std::string::npos) {
    opt->type_name(type.find("FILE.png") != std::string::npos ? "FILE.png|FILE.svg" : "FILE");
  } else if (type.find("DIR") != std::string::npos) {
    opt->type_name("DIR");
  } else if (!choices.empty()) {
    opt->type_name(choices);
  } else if (const std::size_t colon = type.find(':'); colon != std::string::npos) {
    opt->type_name(type.substr(0, colon));
  }
  if (!range.empty()) {
    const std::size_t dash = range.find(" - ");
    opt->description(opt->get_description() +
                     fmt::format(" ({} to {})", range.substr(0, dash), range.substr(dash + 3)));
  }
}

}  // namespace

void name_values(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    for (CLI::Option* opt : sub->get_options([](CLI::Option*) { return true; })) {
      if (opt->get_items_expected_max() == 0) continue;  // a flag
      if (opt->check_lname("out") || opt->check_lname("data-dir") || opt->check_lname("state") ||
          opt->check_lname("in") || opt->check_lname("man")) {
        plain_metavar(opt);
        opt->type_name("DIR");
      } else if (opt->check_lname("seeds") || opt->check_lname("seed")) {
        opt->type_name("SEEDS");
      } else {
        plain_metavar(opt);
      }
    }
    name_values(*sub);
  }
}

Action add_completion_command(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("completion", "print a bash or zsh completion script");
  cmd->group("");  // hidden
  cmd->add_option("shell", *shell, "bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  return [&app, shell] {
    std::cout << (*shell == "bash" ? bash_completion(app) : zsh_completion(app));
    std::cout.flush();
    return 0;
  };
}

Action add_cli_docs_command(CLI::App& app) {
  struct DocOptions {
    std::string markdown;
    std::string man_dir;
    bool flags = false;
  };
  auto o = std::make_shared<DocOptions>();
  CLI::App* cmd = app.add_subcommand("cli-docs", "write the command-line reference");
  cmd->group("");  // hidden
  cmd->add_option("--markdown", o->markdown, "write docs/CLI.md's text to FILE (- for stdout)");
  cmd->add_option("--man", o->man_dir, "write the man pages into DIR");
  cmd->add_flag("--flags", o->flags, "print every documented flag of every command");
  return [&app, o] {
    if (!o->markdown.empty()) {
      const std::string text = markdown_reference(app);
      if (o->markdown == "-") {
        std::cout << text;
      } else if (Status s = write_text_file(o->markdown, text); !s.ok()) {
        return fail(s);
      }
    }
    if (!o->man_dir.empty()) {
      if (Status s = write_text_files(o->man_dir, man_pages(app)); !s.ok()) return fail(s);
    }
    if (o->flags) std::cout << flag_list(app);
    std::cout.flush();
    return 0;
  };
}

}  // namespace greensched::app

#pragma once
// Subcommands of `scaling`. Each adds itself to the app and returns the function that runs it.
// Runners throw std::invalid_argument for invalid values (exit 1); CLI11 reports usage errors (exit 2).
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace cli {

using Runner = std::function<void()>;

Runner add_chips(CLI::App& app);
Runner add_matmul(CLI::App& app);

// A dimension given on the command line: a positive whole number ("4096", "1e6").
// Throws std::invalid_argument naming the option and the text.
double parse_size(const std::string& option, const std::string& text);

}  // namespace cli

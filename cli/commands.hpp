#pragma once
// Subcommands of `scaling`. Each adds itself to the app and returns the function that runs it.
// Runners throw std::invalid_argument for invalid values (exit 1); CLI11 reports usage errors (exit 2).
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace cli {

using Runner = std::function<void()>;

Runner add_chips(CLI::App& app);
Runner add_matmul(CLI::App& app);
Runner add_collective(CLI::App& app);
Runner add_simulate(CLI::App& app);
Runner add_shard(CLI::App& app);
Runner add_models(CLI::App& app);
Runner add_params(CLI::App& app);

// A dimension given on the command line: a positive whole number ("4096", "1e6").
// Throws std::invalid_argument naming the option and the text.
double parse_size(const std::string& option, const std::string& text);
// "128,2048" -> {128, 2048}, each a positive whole number.
std::vector<double> parse_sizes(const std::string& option, const std::string& text);
// "0,2" -> {0, 2}: non-negative whole numbers.
std::vector<int> parse_indices(const std::string& option, const std::string& text);

}  // namespace cli

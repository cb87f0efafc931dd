#pragma once
// One module per subcommand (cli/commands/<name>.cpp): add_<name> declares the subcommand, its typed
// options (options.hpp) and what it runs. main.cpp adds every module and runs the one chosen.
#include <CLI/CLI.hpp>

#include <functional>

namespace cli {

// The chosen subcommand's work, run by main once the whole command line has parsed (so a missing
// required option or an unknown one is reported before anything runs).
std::function<void()>& pending();
inline void run_when_chosen(CLI::App* sub, std::function<void()> run) {
  sub->callback([run = std::move(run)] { pending() = run; });
}

void add_chips(CLI::App& app);
void add_models(CLI::App& app);
void add_params(CLI::App& app);
void add_matmul(CLI::App& app);
void add_collective(CLI::App& app);
void add_simulate(CLI::App& app);
void add_shard(CLI::App& app);
void add_collective_matmul(CLI::App& app);
void add_layout(CLI::App& app);
void add_dot(CLI::App& app);
void add_serve(CLI::App& app);
void add_train(CLI::App& app);
void add_plan(CLI::App& app);

}  // namespace cli

// `scaling`: the book's questions for any chip and shape. See README.md, "Use the CLI".
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>
#include <stdexcept>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"scaling: roofline and scaling arithmetic from How to Scale Your Model"};
  app.require_subcommand(1);
  std::map<const CLI::App*, cli::Runner> runners;
  for (auto add : {cli::add_chips, cli::add_matmul, cli::add_collective, cli::add_simulate, cli::add_shard,
                    cli::add_models, cli::add_params}) {
    auto runner = add(app);
    runners[app.get_subcommands({}).back()] = runner;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "scaling: " << e.what() << " (see scaling --help)\n";
    return 2;
  }

  try {
    for (auto* sub : app.get_subcommands()) runners.at(sub)();
    return 0;
  } catch (const CLI::ParseError& e) {  // a rule CLI11 cannot express, checked after parsing
    std::cerr << "scaling: " << e.what() << " (see scaling --help)\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "scaling: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "scaling: internal error: " << e.what() << "\n";
    return 3;
  }
}

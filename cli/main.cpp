// `scaling`: the book's questions for any chip, shape and model. See README.md, "Use the CLI".
// Each subcommand is a module (cli/commands/<name>.cpp) that declares its own typed options (train and plan
// share cli/commands/train_plan.cpp; their runners are cli/train.cpp and cli/plan.cpp). main parses the
// command line, then runs the chosen subcommand and turns its exceptions into exit codes.
#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "commands/modules.hpp"
#include "options.hpp"
#include "scaling/base/format.hpp"
#include "scaling_main.hpp"

std::function<void()>& cli::pending() {
  static std::function<void()> run;
  return run;
}

int scaling_main(int argc, char** argv) {
  CLI::App app{"scaling: roofline and scaling arithmetic from How to Scale Your Model"};
  app.require_subcommand(1);
  // One module per subcommand (cli/commands/<name>.cpp; train and plan share train_plan.cpp).
  cli::add_chips(app);
  cli::add_matmul(app);
  cli::add_collective(app);
  cli::add_simulate(app);
  cli::add_shard(app);
  cli::add_models(app);
  cli::add_params(app);
  cli::add_collective_matmul(app);
  cli::add_layout(app);
  cli::add_dot(app);
  cli::add_serve(app);
  cli::add_train(app);
  cli::add_plan(app);

  // Every message is one line: user values may hold newlines or escapes, so the whole text is escaped
  // (and cut when very long) where it is printed. Exit 2 for usage, 1 for a value, 3 for a bug of ours.
  auto say = [](const std::string& message, const char* suffix = "") {
    std::cerr << "scaling: " << scaling::escape_for_message(message, 600) << suffix << "\n";
  };
  // Where a usage error points: the chosen subcommand's help when there is one ("scaling plan --help").
  auto help_hint = [&app]() {
    const auto chosen = app.get_subcommands();
    return chosen.empty() ? std::string(" (see scaling --help)")
                          : " (see scaling " + chosen.front()->get_name() + " --help)";
  };
  cli::pending() = nullptr;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    // An unknown option is named even when CLI11 first finds a required one missing: "--ctx" is the
    // mistake, not "--context is required".
    // One wording whichever error CLI11 raised (its ExtrasError lists the leftovers last first, values
    // before options): the first leftover that looks like an option, else the first leftover.
    const auto extra = app.remaining(true);
    if (!extra.empty()) {
      std::string named = extra.front();
      for (const auto& x : extra)
        if (x.size() > 1 && x[0] == '-') {
          named = x;
          break;
        }
      say("unknown option or argument '" + named + "'", help_hint().c_str());
      return 2;
    }
    // An option given more than once: CLI11 says "--tp: At Most 1 required but received 2" (it counts
    // values, not occurrences); the user typed the option twice, so the message says that, counting the
    // occurrences on the command line ("--tp" or "--tp=…").
    if (const std::string what = e.what(); what.find(": At Most ") != std::string::npos) {
      const std::string name = what.substr(0, what.find(": At Most "));
      int times = 0;
      for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == name || arg.rfind(name + "=", 0) == 0) ++times;
      }
      if (times >= 2) {
        say(name + " given " + (times == 2 ? std::string("twice") : std::to_string(times) + " times") +
                ": give it once",
            help_hint().c_str());
        return 2;
      }
    }
    say(e.what(), help_hint().c_str());
    return 2;
  } catch (const std::invalid_argument& e) {  // a typed option's check (options.hpp): a bad value, exit 1
    say(e.what());
    return 1;
  }

  try {
    // An option without a default given an empty value ('--model ""') is a bad value of that option, not
    // a missing one (runners read an empty string as "not given"); options with a default check their own.
    for (const auto* sub : app.get_subcommands())
      for (const auto* opt : sub->get_options())
        if (opt->get_type_size() != 0 && opt->count() > 0 && opt->get_default_str().empty())
          for (const auto& value : opt->results())
            if (value.empty()) throw std::invalid_argument(opt->get_name() + " '': empty value");
    if (!cli::pending()) throw cli::UsageError("a subcommand is required");
    cli::pending()();
    return 0;
  } catch (const cli::UsageError& e) {
    say(e.what(), help_hint().c_str());
    return 2;
  } catch (const std::invalid_argument& e) {
    say(e.what());
    return 1;
  } catch (const nlohmann::json::exception& e) {  // a value JSON cannot hold or a mistyped field left unchecked
    say(std::string("invalid JSON value: ") + e.what());
    return 1;
  } catch (const std::exception& e) {
    say(std::string("internal error: ") + e.what());
    return 3;
  }
}

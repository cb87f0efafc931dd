// The entry point every chapter program shares: `chNN_name [--json]`.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <iostream>

#include "exercise.hpp"
#include "output.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Worked answers of one chapter of How to Scale Your Model, computed and checked."};
  bool json = false;
  app.add_flag("--json", json, "print the whole chapter as JSON (exercises, answers, tables, series)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": " << e.what() << "\n" << app.help();
    return 2;
  }

  try {
    int defect_count = 0;
    for (const auto& chapter : workbook::chapters()) {
      const auto result = workbook::run(chapter);
      if (json)
        std::cout << workbook::to_json(result) << "\n";
      else
        std::cout << workbook::to_text(result);
      for (const auto& d : workbook::defects(result)) {
        std::cerr << "check failed: " << d << "\n";
        ++defect_count;
      }
    }
    return defect_count == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

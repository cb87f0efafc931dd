#pragma once
// validation/README.md as text, for the tests that hold its tables to validation_report's output (the README
// sits beside training-runs.json). Empty when it cannot be read, which those tests' row checks then fail on.
#include <fstream>
#include <sstream>
#include <string>

inline std::string validation_readme() {
  std::string path = VALIDATION_RUNS_JSON;
  path = path.substr(0, path.rfind('/')) + "/README.md";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

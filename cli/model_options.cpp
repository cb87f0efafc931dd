// --model NAME or --config PATH: the model every model-taking subcommand runs on.
#include "commands.hpp"
#include "scaling/model/presets.hpp"

namespace cli {

scaling::TransformerConfig resolve_model(const std::string& subcommand, const std::string& model,
                                         const std::string& config) {
  if (model.empty() == config.empty())
    throw UsageError(subcommand + (model.empty() ? ": give --model NAME or --config PATH"
                                                 : ": give --model or --config, not both"));
  return model.empty() ? for_option("--config", [&] { return scaling::load_hf_config(config); })
                       : for_option("--model", [&] { return scaling::model(model); });
}

}  // namespace cli

kts_cli::tool_main!("kts-sample", kts_sample::Args, kts_sample::run);

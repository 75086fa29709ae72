kts_cli::tool_main!("kts-catalog", kts_catalog::Args, kts_catalog::run);

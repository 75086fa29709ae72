kts_cli::tool_main!("kts-docgen", kts_docgen::Args, kts_docgen::run);

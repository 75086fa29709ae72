kts_cli::tool_main!("kts-crawl", kts_crawl::Args, kts_crawl::run);

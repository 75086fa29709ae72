//! Routing latency over a catalog of 10,000 synthetic scopes: deal folders
//! named like `Bear Stearns 2006-HE1`, with varied entities and keywords.
//! 200 questions, half naming a scope by its words, half not; prints the
//! build time, `search` and `slug_mentioned` latency p50/p95, and how often
//! the named scope comes first.
//!
//!     cargo run -p kts-catalog --example route_bench [-- SCOPES QUESTIONS]

use std::time::{Duration, Instant};

use kts_catalog::{Catalog, CatalogRow, Rebuild};

const ISSUERS: [&str; 16] = [
    "Bear Stearns",
    "Morgan Stanley",
    "Goldman Sachs",
    "JP Morgan",
    "Citigroup",
    "Wells Fargo",
    "Countrywide",
    "Lehman",
    "Merrill Lynch",
    "Deutsche Bank",
    "Credit Suisse",
    "Washington Mutual",
    "Banc of America",
    "Option One",
    "New Century",
    "Residential Asset",
];
const SERIES: [&str; 8] = ["HE", "AR", "NC", "OPT", "WMC", "FRE", "CB", "AQ"];
const PARTIES: [&str; 12] = [
    "Wells Fargo Bank",
    "US Bank National Association",
    "Deutsche Bank National Trust Company",
    "LaSalle Bank",
    "EMC Mortgage Corporation",
    "Ocwen Loan Servicing",
    "Countrywide Home Loans Servicing",
    "Litton Loan Servicing",
    "Saxon Mortgage Services",
    "HSBC Bank USA",
    "Moody's Investors Service",
    "Standard & Poor's",
];
const TERMS: [&str; 10] = [
    "Pooling and Servicing Agreement",
    "Determination Date",
    "Distribution Date",
    "Realized Loss",
    "Overcollateralization Target Amount",
    "Stepdown Date",
    "Trigger Event",
    "Prepayment Premium",
    "Net WAC Rate",
    "Cap Contract",
];
const WORDS: [&str; 40] = [
    "mortgage",
    "certificates",
    "trustee",
    "servicer",
    "remittance",
    "delinquency",
    "prepayment",
    "interest",
    "principal",
    "class",
    "loan",
    "pool",
    "balance",
    "rating",
    "swap",
    "cap",
    "reserve",
    "fund",
    "advance",
    "foreclosure",
    "reo",
    "loss",
    "coupon",
    "margin",
    "index",
    "libor",
    "tranche",
    "subordination",
    "insurance",
    "custodian",
    "depositor",
    "sponsor",
    "originator",
    "underwriter",
    "prospectus",
    "supplement",
    "dscr",
    "commercial",
    "multifamily",
    "amortization",
];
const DOC_TYPES: [&str; 6] = [
    "AGREEMENT",
    "REPORT",
    "PROSPECTUS",
    "GENERAL",
    "POLICY",
    "REFERENCE",
];

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let scopes: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(10_000);
    let questions: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(200);
    let mut rng = fastrand::Rng::with_seed(7);

    let root = tempfile::tempdir()?;
    let rows = synthetic_rows(scopes, &mut rng);
    let started = Instant::now();
    let mut rebuild = Rebuild::begin(root.path())?;
    for row in &rows {
        rebuild.add(row)?;
    }
    rebuild.commit()?;
    let built = started.elapsed();
    let size = std::fs::metadata(kts_catalog::catalog_path(root.path()))?.len();

    // What a one-question process pays first: opening the catalog.
    let mut opens = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let catalog = Catalog::open(root.path())?;
        catalog.search("bear stearns", 1)?;
        opens.push(t.elapsed());
    }
    let catalog = Catalog::open(root.path())?;
    // Warm the page cache and the statement cache once.
    catalog.search("warm up the catalog", 10)?;

    let mut asked = Vec::with_capacity(questions);
    for i in 0..questions {
        let row = &rows[rng.usize(..rows.len())];
        if i % 2 == 0 {
            // Names the scope by its words, as people write them.
            asked.push((
                format!(
                    "What is the {} of {}?",
                    TERMS[rng.usize(..TERMS.len())].to_lowercase(),
                    spoken_name(&row.path)
                ),
                Some(row.slug.clone()),
            ));
        } else {
            asked.push((
                format!(
                    "which deals have {} as trustee and {} {} in {}",
                    PARTIES[rng.usize(..PARTIES.len())],
                    WORDS[rng.usize(..WORDS.len())],
                    WORDS[rng.usize(..WORDS.len())],
                    1998 + rng.i32(0..13)
                ),
                None,
            ));
        }
    }

    for limit in [10, 100] {
        let mut times = Vec::with_capacity(asked.len());
        let (mut naming, mut other) = (Vec::new(), Vec::new());
        let mut named = 0;
        let mut first = 0;
        let mut found = 0;
        for (question, expected) in &asked {
            let t = Instant::now();
            let hits = catalog.search(question, limit)?;
            times.push(t.elapsed());
            match expected {
                Some(_) => naming.push(t.elapsed()),
                None => other.push(t.elapsed()),
            }
            found += hits.len();
            if let Some(slug) = expected {
                named += 1;
                if hits.first().is_some_and(|(row, _)| &row.slug == slug) {
                    first += 1;
                }
            }
        }
        println!(
            "search(limit {limit:>3}) over {scopes} scopes, {} questions: p50 {:.2} ms, p95 {:.2} ms, \
             max {:.2} ms (p50 naming a scope {:.2} ms, others {:.2} ms); \
             {:.1} scopes per question; named scope first {first}/{named}",
            asked.len(),
            ms(percentile(&mut times, 0.50)),
            ms(percentile(&mut times, 0.95)),
            ms(percentile(&mut times, 1.0)),
            ms(percentile(&mut naming, 0.50)),
            ms(percentile(&mut other, 0.50)),
            found as f64 / asked.len() as f64,
        );
    }
    let mut times = Vec::with_capacity(asked.len());
    for (question, _) in &asked {
        let t = Instant::now();
        catalog.slug_mentioned(question)?;
        times.push(t.elapsed());
    }
    println!(
        "slug_mentioned: p50 {:.2} ms, p95 {:.2} ms",
        ms(percentile(&mut times, 0.50)),
        ms(percentile(&mut times, 0.95)),
    );
    println!(
        "open + first search: p50 {:.2} ms; built in {:.2} s; catalog {:.1} MB",
        ms(percentile(&mut opens, 0.50)),
        built.as_secs_f64(),
        size as f64 / 1e6
    );
    Ok(())
}

/// Unique deal folders with their rows.
fn synthetic_rows(count: usize, rng: &mut fastrand::Rng) -> Vec<CatalogRow> {
    let mut seen = std::collections::HashSet::new();
    let mut rows = Vec::with_capacity(count);
    while rows.len() < count {
        let issuer = ISSUERS[rng.usize(..ISSUERS.len())];
        let year = 1998 + rng.i32(0..13);
        let series = format!("{}{}", SERIES[rng.usize(..SERIES.len())], rng.u32(1..13));
        let folder = format!("{issuer} {year}-{series}");
        if !seen.insert(folder.clone()) {
            continue;
        }
        let pick = |rng: &mut fastrand::Rng, from: &[&str], n: usize| -> Vec<String> {
            let mut chosen: Vec<String> = Vec::new();
            while chosen.len() < n.min(from.len()) {
                let word = from[rng.usize(..from.len())].to_string();
                if !chosen.contains(&word) {
                    chosen.push(word);
                }
            }
            chosen
        };
        let mut entities = pick(rng, &PARTIES, 4);
        entities.extend(pick(rng, &TERMS, 8));
        entities.push(issuer.to_string());
        let mut doc_types = pick(rng, &DOC_TYPES, 3);
        doc_types.sort();
        rows.push(CatalogRow {
            titles: vec![format!("{folder} Monthly Remittance Report")],
            slug: kts_store::scope_slug(&folder),
            path: folder,
            documents: 5 + rng.usize(..6),
            chunks: 200 + rng.usize(..800),
            doc_types,
            years: vec![year, year + 1],
            entities,
            keywords: pick(rng, &WORDS, 20),
            model_id: Some("all-MiniLM-L6-v2".into()),
            last_indexed: "2026-01-01T00:00:00.000Z".into(),
        });
    }
    rows
}

/// "Bear Stearns 2006-HE1" as a question might write it: sometimes lowercase.
fn spoken_name(folder: &str) -> String {
    if folder.len().is_multiple_of(2) {
        folder.to_lowercase()
    } else {
        folder.to_string()
    }
}

fn percentile(times: &mut [Duration], p: f64) -> Duration {
    times.sort();
    let index = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[index]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

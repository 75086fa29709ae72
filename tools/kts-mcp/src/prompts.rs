//! The prompts: one per scope, named by its slug (editors list prompts as
//! slash commands, so `/hr` asks the hr scope), and `ask`, routed like
//! `kts-query ROOT`. Each carries the scope's context for the question. A
//! scope slugged `ask` has the prompt `scope-ask`.

use kts_query::{Cutoff, Request};
use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage, Role,
};

use crate::arguments::Arguments;
use crate::server::State;

/// The routed prompt, beside one per scope.
const ASK: &str = "ask";
/// What names a scope's prompt whose slug is taken by the routed one (no
/// slug holds a `-`, so no other scope's prompt has this name).
const SCOPE_PREFIX: &str = "scope-";
/// Prompts listed per page.
const PAGE: usize = 500;
/// How to cite a knowledge root's passages, which two scopes may share a path of.
const CITE_SCOPE_AND_PATH: &str = "Cite each source you use by its scope and path, as the \
                                   passages give them (scope: path, before any >).";

pub fn list(state: &State, cursor: Option<&str>) -> anyhow::Result<ListPromptsResult> {
    let question = || {
        vec![
            PromptArgument::new("question")
                .with_description("The question to answer")
                .with_required(true),
        ]
    };
    let mut prompts = vec![Prompt::new(
        ASK,
        Some("Answer a question from the knowledge base (routed to the scopes it concerns)"),
        Some(question()),
    )];
    for scope in state.knowledge.scopes()? {
        let description = format!("Answer a question from the scope {}", scope.slug);
        let name = match scope.slug.as_str() {
            ASK => format!("{SCOPE_PREFIX}{ASK}"),
            _ => scope.slug,
        };
        prompts.push(Prompt::new(name, Some(description), Some(question())));
    }
    let start = match cursor {
        Some(cursor) => cursor
            .parse::<usize>()
            .map_err(|_| anyhow::anyhow!("not a cursor list_prompts gave: {cursor:?}"))?,
        None => 0,
    };
    let next = (start + PAGE < prompts.len()).then(|| (start + PAGE).to_string());
    let mut page =
        ListPromptsResult::with_all_items(prompts.into_iter().skip(start).take(PAGE).collect());
    page.next_cursor = next;
    Ok(page)
}

pub fn get(
    state: &State,
    request: &GetPromptRequestParams,
    cutoff: Cutoff,
) -> anyhow::Result<GetPromptResult> {
    let scopes = match request.name.as_str() {
        ASK => Vec::new(),
        name => {
            let slug = name.strip_prefix(SCOPE_PREFIX).unwrap_or(name);
            state.knowledge.one_scope(Some(slug)).map_err(|_| {
                anyhow::anyhow!(
                    "no prompt {name:?}: the prompts are ask and one per scope (prompts/list)"
                )
            })?;
            vec![slug.to_string()]
        }
    };
    let values = request.arguments.clone().unwrap_or_default();
    let args = Arguments::new(&request.name, &values, &["question"])?;
    let question = args.question("question")?;
    let request = Request {
        question: question.to_string(),
        scopes,
        cutoff,
        ..Request::default()
    };
    let context = state.knowledge.context(&request)?;
    let cite = match state.knowledge.is_root() {
        true => CITE_SCOPE_AND_PATH,
        false => "Cite the path of each source you use.",
    };
    let text = format!(
        "Answer the question from the knowledge base's passages below. {cite} If the passages \
         do not answer it, say so.\n\n{context}\n\nQuestion: {question}"
    );
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(format!("{} for {question:?}", request_label(&request))),
    )
}

fn request_label(request: &Request) -> String {
    match request.scopes.first() {
        Some(slug) => format!("the scope {slug}'s context"),
        None => "the knowledge base's context".to_string(),
    }
}

//! `/openapi.json`: the API's OpenAPI document, generated from the routes and their
//! types (utoipa), so it cannot drift from the code.

use crate::api;
use crate::error::ErrorBody;
use crate::routes;
use axum::Json;
use utoipa::openapi::security::ApiKey;
use utoipa::openapi::security::ApiKeyValue;
use utoipa::openapi::security::HttpAuthScheme;
use utoipa::openapi::security::HttpBuilder;
use utoipa::openapi::security::SecurityScheme;
use utoipa::Modify;
use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(title = "wright server", description = "A coding agent for local models, over HTTP and WebSocket. Every route wants the server's key."),
    paths(
        routes::create_conversation,
        routes::list_conversations,
        routes::get_conversation,
        routes::conversation_events,
        routes::interrupt,
        routes::run,
        routes::condense,
        crate::aside::ask,
        routes::send_message,
        routes::delete_conversation,
        crate::changes::diff,
        crate::live::live_diff,
        crate::actions::fork,
        crate::actions::apply,
        crate::actions::discard,
        crate::actions::file,
        crate::screenshot::screenshot,
        crate::workspace::files,
        crate::setup::models,
        crate::setup::doctor,
        crate::settings_view::settings,
        crate::settings_view::change,
        crate::agents_view::agents,
        crate::confirm::confirm,
        crate::openai::models,
        crate::openai::completions,
        crate::socket::events,
        crate::automations::list,
        crate::user_secrets::list,
        crate::user_secrets::set,
        crate::user_secrets::remove,
    ),
    components(schemas(
        api::NewConversation,
        api::Settings,
        api::Message,
        api::Run,
        api::Condense,
        crate::aside::Ask,
        crate::aside::Answer,
        api::State,
        api::Notice,
        api::Conversation,
        api::Conversations,
        api::EventsPage,
        api::Diff,
        api::LiveDiff,
        api::Confirm,
        api::PendingAction,
        api::Models,
        api::Fork,
        api::Apply,
        api::Applied,
        api::Discarded,
        api::DiscardOutcome,
        ErrorBody,
        crate::automations::List,
        crate::automations::Listed,
        crate::automations::Firing,
        crate::automations::Waiting,
        crate::settings_view::Configured,
        crate::settings_view::Setting,
        crate::settings_view::Decision,
        crate::settings_view::Changeable,
        crate::settings_view::Change,
        crate::agents_view::Agents,
        crate::agents_view::Agent,
        crate::user_secrets::SecretNames,
        crate::user_secrets::SecretValue,
    )),
    modifiers(&Keys),
    security(("bearer" = []), ("session_api_key" = []))
)]
struct Document;

/// The two ways of giving the key.
struct Keys;

impl Modify for Keys {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "session_api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-Session-API-Key"))),
        );
    }
}

/// The document, as JSON.
#[utoipa::path(get, path = "/openapi.json", responses((status = 200, description = "this document")))]
pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(Document::openapi())
}

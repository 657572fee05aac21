//! HTTP routing: which path answers JSON-RPC, Horizon reads, friendbot and the admin API.

use std::sync::Arc;

use crate::node::Shared;
use crate::{admin, friendbot, horizon, http, rpc};

pub(crate) fn route(shared: &Arc<Shared>, req: http::Request) -> http::Response {
    let path = req.path.trim_end_matches('/');
    let base = shared.base_url.get().cloned().unwrap_or_default();
    match (req.method.as_str(), path) {
        ("GET" | "POST", "/friendbot") => friendbot::route(shared, &req),
        ("POST", "/admin/ledger-entry") => admin::route(shared, &req.body),
        // JSON-RPC at the root, `/rpc`, `/soroban/rpc`, and under any other path: RPC providers put an
        // API key in the path (`https://rpc.example/KEY/`), as operators' URLs then do.
        ("POST", _) => http::Response::json(200, &rpc::handle(shared, &req.body)),
        // Horizon reads, under `/horizon` and (as quickstart's `local` serves them) at the root, so
        // the `local` network's default Horizon URL works as is.
        ("GET", p) => match p.strip_prefix("/horizon").unwrap_or(p) {
            "" => {
                let (status, v) = horizon::root(&shared.lock());
                respond_horizon(status, v)
            }
            p if p.starts_with("/accounts/") => {
                let id = &p["/accounts/".len()..];
                if let Some(account) = crate::xdrutil::parse_g_address(id) {
                    let key = crate::classic::account_key(&account);
                    if let Err(e) = crate::fork::fault_in(shared, vec![key]) {
                        return http::Response::json(
                            502,
                            &serde_json::json!({"error": e.to_string()}),
                        );
                    }
                }
                let (status, v) = horizon::account(&shared.lock(), &format!("{base}/horizon"), id);
                respond_horizon(status, v)
            }
            "/assets" => {
                let (status, v) =
                    horizon::assets(&shared.lock(), &format!("{base}/horizon"), &req.query);
                respond_horizon(status, v)
            }
            _ => not_found(),
        },
        _ => not_found(),
    }
}

fn not_found() -> http::Response {
    let (status, v) = horizon::not_found();
    http::Response::problem(status, &v)
}

fn respond_horizon(status: u16, v: serde_json::Value) -> http::Response {
    if status == 200 {
        http::Response {
            status,
            content_type: "application/hal+json; charset=utf-8",
            body: v.to_string().into_bytes(),
        }
    } else {
        http::Response::problem(status, &v)
    }
}

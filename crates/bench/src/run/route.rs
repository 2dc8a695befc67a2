//! The addresses, namespaces and interfaces a target puts each side at.

use super::ServerSide;
use crate::testbed;
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

/// The addresses, namespaces and interfaces of one target.
pub(super) struct Route {
    pub(super) label: String,
    pub(super) client_netns: Option<PathBuf>,
    pub(super) server_netns: Option<PathBuf>,
    pub(super) server_ip: IpAddr,
    pub(super) client_ifs: Vec<String>,
    pub(super) server_ifs: Vec<String>,
    pub(super) shared_host: bool,
    pub(super) napi_applies: bool,
    pub(super) warnings: Vec<String>,
}

impl Route {
    pub(super) fn of(target: ServerSide<'_>) -> Route {
        let lo = || vec!["lo".to_string()];
        match target {
            ServerSide::Loopback => Route {
                label: "loopback".into(),
                client_netns: None,
                server_netns: None,
                server_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
                client_ifs: lo(),
                server_ifs: lo(),
                shared_host: true,
                napi_applies: false,
                warnings: Vec::new(),
            },
            ServerSide::Testbed(bed) => Route {
                label: "testbed".into(),
                client_netns: Some(bed.client_netns()),
                server_netns: Some(bed.server_netns()),
                server_ip: IpAddr::V4(testbed::SERVER_IP),
                client_ifs: vec![bed.names().client_if.clone()],
                server_ifs: vec![bed.names().server_if.clone()],
                shared_host: true,
                napi_applies: bed.napi_mode(),
                warnings: bed.warnings().to_vec(),
            },
            ServerSide::Peer(p) => Route {
                label: format!("peer {}", p.addr),
                client_netns: p.client_netns.clone(),
                server_netns: None,
                server_ip: p.addr.ip(),
                client_ifs: Vec::new(),
                server_ifs: Vec::new(),
                shared_host: false,
                napi_applies: false,
                warnings: Vec::new(),
            },
        }
    }
}

//! Load in CI: a handful of real provers at once against one service; all
//! must be verified and the service must end with no session left. The
//! 50-prover run is `cargo run --release -p webproof-service --example load`.

#[path = "common/load.rs"]
mod load;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_concurrent_provers_are_all_verified() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = webproof_net::Fixture::start("127.0.0.1:0", dir.path(), &[])
        .await
        .unwrap();
    let cfg = load::service_config(&fixture.certs.ca_path, 8);
    let service = webproof_service::Service::bind(cfg.build().unwrap())
        .await
        .unwrap();
    let addr = service.addrs().tcp.unwrap().to_string();
    let metrics = service.metrics();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(service.run(async move {
        let _ = stopped.await;
    }));
    let report = load::run_provers(&addr, &fixture, 8, "/json").await;
    println!("{}", report.summary());
    if let Some(kib) = load::peak_rss_kib("self") {
        println!("test process (service, provers and fixture) peak RSS {kib} KiB");
    }
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.ok, 8);
    // The prover has its verdict a moment before the service books the session.
    for _ in 0..1000 {
        if metrics.sessions(webproof_service::Outcome::Verified) == 8 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(metrics.sessions(webproof_service::Outcome::Verified), 8);
    let _ = stop.send(());
    let r = done.await.unwrap();
    assert_eq!(r.dropped, 0);
    assert_eq!(metrics.active(), 0);
}

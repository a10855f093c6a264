//! Nothing of a service is left in /dev/shm once both sides dropped.

use crate::Spec;

fn shm_files(prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/dev/shm")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    names
}

#[test]
fn dropping_both_sides_leaves_nothing_in_dev_shm() {
    let domain = format!("mwpsvc{}", std::process::id());
    let prefix = format!("{domain}_");
    let spec = |addr: &str| Spec::new(addr).with_option("domain", &domain);
    let before = shm_files(&prefix);
    {
        let mut server = super::server(&spec("shmcheck")).unwrap();
        let mut client = super::client(&spec(&server.local_addr())).unwrap();
        client.wait_matched(5_000_000_000).unwrap();
        let id = client.call(&[7u8; 300_000]).unwrap();
        let (mut req, mut buf) = (Vec::new(), Vec::new());
        let token = server
            .recv_request(&mut req, 5_000_000_000)
            .unwrap()
            .unwrap();
        assert_eq!(req.len(), 300_000);
        server.reply(token, &req[..1000]).unwrap();
        let r = client.recv_reply(&mut buf, 5_000_000_000).unwrap().unwrap();
        assert_eq!((r.call, r.ok, buf.len()), (id, true, 1000));
        // a request the server drops unanswered is a failed call, not a hang
        let id = client.call(b"x").unwrap();
        let token = server
            .recv_request(&mut req, 5_000_000_000)
            .unwrap()
            .unwrap();
        drop(server);
        let _ = token;
        let r = client.recv_reply(&mut buf, 5_000_000_000).unwrap().unwrap();
        assert_eq!((r.call, r.ok), (id, false));
        assert!(!shm_files(&prefix).is_empty());
    }
    // iceoryx2 keeps one node counter per domain for good (the fixture removes it at exit)
    let left: Vec<String> = shm_files(&prefix)
        .into_iter()
        .filter(|n| !before.contains(n))
        .collect();
    for f in &left {
        let _ = std::fs::remove_file(format!("/dev/shm/{f}"));
    }
    assert!(left.len() <= 1, "left in /dev/shm: {left:?}");
}

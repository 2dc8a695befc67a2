//! NFS mount options (nfs(5)) as the options field of an `/etc/fstab` line: `rsize=2048,
//! wsize=2048`. nictune never changes a mount on a running system; the options take effect
//! at the next mount.

use super::{partition, Item, Omitted};
use nictune_core::catalog::Via;

/// Path, body and omissions.
pub fn render(items: &[Item]) -> (String, String, Vec<Omitted>) {
    let (kept, omitted) = partition(items, |i| {
        i.template(Via::Fstab)
            .map(|_| ())
            .ok_or_else(|| super::kind_reason(i, super::Format::Fstab))
    });
    let options: Vec<String> = kept
        .iter()
        .map(|i| {
            i.template(Via::Fstab)
                .expect("kept")
                .replace("{value}", &i.value.plain())
        })
        .collect();
    let options = options.join(",");
    let out = format!(
        "# NFS mount options: add them to the options field (the fourth) of the NFS line in\n\
         # /etc/fstab, for example\n\
         #   fileserver:/export  /srv/data  nfs  {options}  0  0\n\
         # or give them to mount -o. They take effect at the next mount\n\
         # (umount /srv/data && mount /srv/data); nictune never changes a mount live.\n\
         {options}\n"
    );
    ("/etc/fstab".into(), out, omitted)
}

#[cfg(test)]
mod tests {
    use super::super::tests::items_of;

    #[test]
    fn nfs_sizes_become_one_options_field_and_the_rest_is_omitted() {
        let (path, text, omitted) = super::render(&items_of(
            "[settings]\n\"nfs.rsize\" = 2048\n\"nfs.wsize\" = 2048\n\"route.window\" = 4096\n",
        ));
        assert_eq!(path, "/etc/fstab");
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines, ["rsize=2048,wsize=2048"]);
        assert_eq!(omitted.len(), 1);
        assert!(
            omitted[0].reason.starts_with("route attribute"),
            "{omitted:?}"
        );
    }
}

//! Placeholder: replaced by the path-safety module (h-paths).

/// Returns whether every component of the repository-relative `path` is one git would write.
pub fn is_safe_path(path: &[u8]) -> bool {
    use gix::bstr::ByteSlice;
    let opts = gix::validate::path::component::Options {
        protect_windows: false,
        protect_hfs: true,
        protect_ntfs: true,
    };
    path.split_str("/").all(|c| {
        gix::validate::path::component(c.as_bstr(), None, opts).is_ok() && !c.contains(&b'\\')
    })
}

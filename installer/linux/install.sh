#!/bin/sh
# Install Finetune Studio for the current user (no root needed), or remove it with --uninstall.
#
#   ./install.sh               copy the program to ~/.local/share/finetune-studio/app, add a menu
#                              entry, an icon and the command ~/.local/bin/finetune-studio
#   ./install.sh --uninstall   remove those again (asks before removing the runtime and your runs)
#
# The first start sets up the runtime (Python, PyTorch and the app) in
# ~/.local/share/FinetuneStudio; that takes a few minutes, later starts are immediate.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
data_home=${XDG_DATA_HOME:-$HOME/.local/share}
app_dir=$data_home/finetune-studio/app
bin_dir=$HOME/.local/bin
desktop_file=$data_home/applications/finetune-studio.desktop
icon_file=$data_home/icons/hicolor/256x256/apps/finetune-studio.png
runtime_dir=$data_home/FinetuneStudio

if [ "${1:-}" = "--uninstall" ]; then
    rm -rf "$data_home/finetune-studio"
    rm -f "$bin_dir/finetune-studio" "$desktop_file" "$icon_file"
    echo "Finetune Studio was removed."
    # A data folder moved elsewhere (Settings > Move the data folder) is named in location.txt.
    moved=""
    if [ -f "$runtime_dir/location.txt" ]; then
        moved=$(iconv -f UTF-16LE -t UTF-8 "$runtime_dir/location.txt" 2>/dev/null || true)
    fi
    if [ -d "$runtime_dir" ]; then
        printf "Also remove the runtime, your runs and trained models in %s%s? [y/N] " \
            "$runtime_dir" "${moved:+ and $moved}"
        read -r answer || answer=n
        case "$answer" in
            y|Y|yes|YES)
                if [ -n "$moved" ] && { [ -f "$moved/runtime/finetune-studio-runtime.json" ] || [ -d "$moved/runs" ]; }; then
                    rm -rf "$moved"; echo "Removed $moved."
                fi
                rm -rf "$runtime_dir"; echo "Removed $runtime_dir." ;;
            *) echo "Kept $runtime_dir${moved:+ and $moved}." ;;
        esac
    fi
    exit 0
fi

if [ ! -x "$here/FinetuneStudio/FinetuneStudio" ]; then
    echo "error: run install.sh from the unpacked Finetune Studio folder." >&2
    exit 1
fi

# Before anything is copied: can a window open here? A set but dead DISPLAY, or Qt's X11 libraries
# missing (libxcb-cursor0, libxcb-icccm4, ...), is named in one sentence with the install command
# (the launcher's own check, desktop/launcher/display.py). Said, not fatal: the libraries can come after.
if ! "$here/FinetuneStudio/FinetuneStudio" --check-display; then
    echo "(Finetune Studio is installed anyway; it opens once that is fixed.)" >&2
fi

# Into a new folder first, then swapped in: an interrupted copy never replaces a working one.
mkdir -p "$data_home/finetune-studio" "$bin_dir" "$(dirname "$desktop_file")" "$(dirname "$icon_file")"
rm -rf "$app_dir.new"
cp -R "$here/FinetuneStudio" "$app_dir.new"
rm -rf "$app_dir"
mv "$app_dir.new" "$app_dir"

ln -sf "$app_dir/FinetuneStudio" "$bin_dir/finetune-studio"
cp "$here/finetune-studio.png" "$icon_file"
sed "s|@EXEC@|\"$app_dir/FinetuneStudio\"|" "$here/finetune-studio.desktop" > "$desktop_file"
chmod 644 "$desktop_file"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$(dirname "$desktop_file")" || true

echo "Finetune Studio is installed. Start it from the applications menu, or run: $bin_dir/finetune-studio"
case ":$PATH:" in
    *":$bin_dir:"*) ;;
    *) echo "(Add $bin_dir to your PATH to run it by name.)" ;;
esac

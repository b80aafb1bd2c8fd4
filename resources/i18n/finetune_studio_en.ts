<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>DatasetPickerWidget</name>
    <message numerus="yes">
        <source>%n row(s) for training, {eval} for evaluation</source>
        <translation>
            <numerusform>%n row for training, {eval} for evaluation</numerusform>
            <numerusform>%n rows for training, {eval} for evaluation</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ModelBrowser</name>
    <message numerus="yes">
        <source>%n model(s) found.</source>
        <translation>
            <numerusform>%n model found.</numerusform>
            <numerusform>%n models found.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>OptionsPage</name>
    <message numerus="yes">
        <source>Effective batch: %n example(s) per update</source>
        <translation>
            <numerusform>Effective batch: %n example per update</numerusform>
            <numerusform>Effective batch: %n examples per update</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Effective batch: %n example(s) per update, across the GPUs</source>
        <translation>
            <numerusform>Effective batch: %n example per update, across the GPUs</numerusform>
            <numerusform>Effective batch: %n examples per update, across the GPUs</numerusform>
        </translation>
    </message>
</context>
</TS>

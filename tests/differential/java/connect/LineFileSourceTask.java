// The task of LineFileSource: reads the file's lines from the last committed line number.
package rillet.connect;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

public class LineFileSourceTask extends SourceTask {
    private String file;
    private String topic;
    private long next;

    @Override
    public String version() {
        return "1";
    }

    @Override
    public void start(Map<String, String> props) {
        file = props.get("file");
        topic = props.get("topic");
        Map<String, Object> stored = context.offsetStorageReader().offset(Map.of("file", file));
        next = stored == null ? 0 : ((Number) stored.get("line")).longValue();
    }

    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConnectException(e);
        }
        List<SourceRecord> out = new ArrayList<>();
        while (next < lines.size()) {
            String line = lines.get((int) next);
            next++;
            out.add(new SourceRecord(Map.of("file", file), Map.of("line", next), topic, null,
                Schema.STRING_SCHEMA, line));
        }
        if (out.isEmpty()) {
            Thread.sleep(200);
            return null;
        }
        return out;
    }

    @Override
    public void stop() {}
}
